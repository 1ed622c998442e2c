"""A second corpus of credentials without a vendor prefix, written after the rules were frozen.

``secret_corpus_generic`` was the generic layer's target; this one was written afterwards
(the rules committed first, in e0ce5af, and not changed for it), to measure the layer on
formats it was not tuned on: its figure is reported as it came out, not raised by
tuning. Same structure: ``HOLDOUT`` maps a name to ``(text, secrets)``; values are built
at run time from a seeded generator, vendor prefixes split in the source.
"""

from __future__ import annotations

import base64
import random
import string

_rng = random.Random(20261205)
_ALNUM = string.ascii_letters + string.digits


def _draw(alphabet: str, n: int) -> str:
    while True:
        out = "".join(_rng.choices(alphabet, k=n))
        if any(c.isdigit() for c in out) and any(c.isalpha() for c in out):
            return out


def alnum(n: int) -> str:
    return _draw(_ALNUM, n)


def hexs(n: int) -> str:
    return _draw("0123456789abcdef", n)


def b64(n: int) -> str:
    return _draw(_ALNUM + "+/", n)


def urlsafe(n: int) -> str:
    return _draw(_ALNUM + "_-", n)


def uuid() -> str:
    return f"{hexs(8)}-{hexs(4)}-4{hexs(3)}-a{hexs(3)}-{hexs(12)}"


def _bytes(n: int) -> bytes:
    return bytes(_rng.randrange(256) for _ in range(n))


PW = "Gl4cier!Peak"
PW2 = "Gl4cierPeak9"
_ED25519 = base64.b64encode(bytes.fromhex("302e020100300506032b657004220420") + _bytes(32)).decode()
_P12 = base64.b64encode(bytes.fromhex("30820a61020103308209f706092a864886f70d010701") + _bytes(900)).decode()

HOLDOUT: dict[str, tuple[str, tuple[str, ...]]] = {}


def _add(name: str, text: str, *secrets: str) -> None:
    assert name not in HOLDOUT and all(s in text for s in secrets), name
    HOLDOUT[name] = (text, secrets)


# -- environment and configuration
_add("env-rsync", f"RSYNC_PASSWORD={PW2} rsync -av data/ etl@files::exports", PW2)
_add("env-snowflake-passphrase", f"SNOWFLAKE_PRIVATE_KEY_PASSPHRASE='{PW}'", PW)
_add("env-mlflow", f"export MLFLOW_TRACKING_PASSWORD={PW2}", PW2)
_add("env-webhook-signing", "STRIPE_WEBHOOK_SIGNING_SECRET=" + (k := alnum(40)), k)
_add("env-dd-app-key", "DD_APP_KEY=" + (k := hexs(40)), k)
_add("env-vault-legacy", "export VAULT_TOKEN=s." + (k := alnum(24)), k)
_add("env-algolia-admin", "ALGOLIA_ADMIN_KEY=" + (k := hexs(32)), k)
_add("s3cfg", "[default]\naccess_key = etl-reader\nsecret_key = " + (k := b64(40)) + "\nhost_base = s3.acme.io", k)
_add("boto-gs", "[Credentials]\ngs_access_key_id = GOOGETL\ngs_secret_access_key = " + (k := b64(40)), k)
_add("rclone-conf", "[acme-sftp]\ntype = sftp\nhost = files.acme.org\nuser = etl\npass = " + (k := urlsafe(44)), k)
_add("gha-with-password", f"- uses: docker/login-action@v3\n  with:\n    username: ci\n    password: {PW}\n", PW)
_add("homeassistant-secrets", f"mqtt_password: {PW2}\nlatitude: 52.52\n", PW2)
_add("hostapd", f"interface=wlan0\nssid=AcmeLab\nwpa_passphrase={PW2}\n", PW2)
_add("wpa-supplicant-psk", 'network={\n    ssid="AcmeLab"\n    psk="' + PW2 + '"\n}', PW2)
_add("spring-default", f"spring.datasource.password=${{DB_PASS:{PW2}}}", PW2)
_add("gradle-properties", f"signing.keyId=24875D73\nsigning.password={PW2}\n", PW2)
_add("gradle-groovy-dsl", f"signingConfigs {{\n    release {{\n        storePassword '{PW}'\n        keyAlias 'upload'\n    }}\n}}", PW)
_add("gradle-kotlin-dsl", f'storePassword = "{PW}"', PW)
_add("terraform-tfvars", f'admin_password = "{PW}"\nlocation = "westeurope"', PW)
_add("jupyter-config-token", "c.ServerApp.token = '" + (k := hexs(48)) + "'", k)
_add("json-secret-access-key", '{"accessKeyId": "etl", "secretAccessKey": "' + (k := b64(40)) + '"}', k)
_add("pushover-data", 'requests.post(url, data={"token": "' + (k := alnum(30)) + '", "user": "uQiRzpo4DXghDmr9QzzfQu27cmVRsG"})', k)
_add("pagerduty-routing", '{"routing_key": "' + (k := hexs(32)) + '", "event_action": "trigger"}', k)
# -- command lines
_add("lftp-u", f"lftp -u etl,{PW2} sftp://files.acme.org", PW2)
_add("helm-set", f"helm install db bitnami/postgresql --set auth.postgresPassword={PW2}", PW2)
_add("jupyter-flag-token", "jupyter lab --no-browser --ServerApp.token=" + (k := hexs(48)), k)
_add("dvc-remote-password", f"dvc remote modify --local storage password {PW2}", PW2)
_add("git-sendemail", f"git config --global sendemail.smtppass {PW2}", PW2)
_add("poetry-http-basic", f"poetry config http-basic.acme ci {PW2}", PW2)
_add("kubectl-from-literal", "kubectl create secret generic api --from-literal=api-token=" + (k := alnum(40)), k)
_add("influx-setup", f"influx setup -u admin -p {PW2} -o acme -b metrics -f", PW2)
_add("psexec", f"psexec \\\\etl-box -u ACME\\admin -p {PW} cmd /c dir", PW)
_add("xfreerdp", f"xfreerdp /u:ana /p:{PW2} /v:win-box.acme.org", PW2)
_add("powershell-securestring", f'$pw = ConvertTo-SecureString "{PW}" -AsPlainText -Force', PW)
_add("redis-auth", f"redis-cli -h cache\n> AUTH {PW2}\nOK", PW2)
# -- SQL
_add("sql-alter-user", f"ALTER USER etl WITH PASSWORD '{PW}';", PW)
_add("sql-identified-by", f"CREATE USER ana IDENTIFIED BY '{PW2}';", PW2)
# -- headers, URLs, webhooks
_add("opsgenie-header", "curl -H 'Authorization: GenieKey " + (k := uuid()) + "' https://api.opsgenie.com/v2/alerts", k)
_add("sentry-dsn", "sentry_sdk.init('https://" + (k := hexs(32)) + "@o451236.ingest.sentry.io/5512345')", k)
_add("teams-legacy-webhook", "https://outlook.office.com/webhook/" + (k := f"{uuid()}@{uuid()}/IncomingWebhook/{hexs(32)}/{uuid()}"), k)
_add("cookie-session", "curl -H 'Cookie: sessionid=" + (k := alnum(32)) + "' https://admin.acme.io/", k)
# -- key material
_add("bare-ed25519-pkcs8", "the signing key is " + _ED25519, _ED25519)
_add("p12-base64", "P12_BASE64=" + _P12, _P12)
_add("jwk-oct", '{"kty": "oct", "kid": "hmac-1", "k": "' + (k := urlsafe(43)) + '"}', k)
