"""Credentials that no vendor prefix names: told by what they are, where they stand.

Written before the generic layer of ``secret_rules`` existed, as the target it is
measured against (jupymem issue 31, part 3): a credential-bearing name given a value
in the syntaxes people use (environment, YAML, TOML, INI, JSON, XML elements and
attributes, Java properties, connection strings, URL queries, command-line flags,
call arguments), base64 that decodes to key material, key bodies without their
armour, webhook URLs whose path or query is the token, and a few vendor shapes the
table lacked.

``CORPUS`` maps a name to ``(text, secrets)``: the text as someone would paste it
into a statement or a cell, and the parts of it that must not be kept (a redacted
failed cell may keep none of them; ``remember`` refuses the text).

As in ``secret_shapes``, every value is built at run time from a seeded generator
and vendor prefixes are split in the source, so the file holds no literal token.
The plain-word passwords ("bluemonkeyseven", "Riv3rBend") are invented.
"""

from __future__ import annotations

import base64
import json
import random
import string

_rng = random.Random(20261204)
_ALNUM = string.ascii_letters + string.digits


def _draw(alphabet: str, n: int) -> str:
    while True:
        out = "".join(_rng.choices(alphabet, k=n))
        if n < 8 or (any(c.isdigit() for c in out) and any(c.isalpha() for c in out)) or not (
            set(alphabet) & set(string.digits)
        ):
            return out


def alnum(n: int) -> str:
    return _draw(_ALNUM, n)


def hexs(n: int) -> str:
    return _draw("0123456789abcdef", n)


def lower(n: int) -> str:
    return _draw(string.ascii_lowercase + string.digits, n)


def b64(n: int) -> str:
    return _draw(_ALNUM + "+/", n)


def urlsafe(n: int) -> str:
    return _draw(_ALNUM + "_-", n)


def _p(*parts: str) -> str:
    return "".join(parts)


def _rand_bytes(n: int) -> bytes:
    return bytes(_rng.randrange(256) for _ in range(n))


def _pem_text(label: str) -> str:
    body = base64.b64encode(_rand_bytes(600)).decode()
    return f"-----BEGIN {label}-----\n" + "\n".join(body[i : i + 64] for i in range(0, len(body), 64)) + (
        f"\n-----END {label}-----\n"
    )


def _b64_pem(label: str) -> str:
    """A PEM file base64-encoded once more, as Kubernetes and kubeconfig hold it."""
    return base64.b64encode(_pem_text(label).encode()).decode()


# The DER headers of private keys: PKCS#8 (RSA), PKCS#1 RSA, SEC1 EC. Their base64 begins
# MIIEv..., MIIEp..., MHcCAQEE...; what follows is random, as a key's numbers are.
_PKCS8 = bytes.fromhex("308204be020100300d06092a864886f70d0101010500048204a8308204a40201000282010100")
_PKCS1 = bytes.fromhex("308204a40201000282010100")
_SEC1 = bytes.fromhex("307702010104")


def _der_b64(header: bytes, n: int) -> str:
    return base64.b64encode(header + _rand_bytes(n)).decode()


def _wrapped(text: str, width: int = 64) -> str:
    return "\n".join(text[i : i + width] for i in range(0, len(text), width))


def _ssh_body() -> str:
    raw = b"openssh-key-v1\x00\x00\x00\x00\x04none\x00\x00\x00\x04none" + _rand_bytes(360)
    return base64.b64encode(raw).decode()


def _discord_bot() -> str:
    user_id = str(_rng.randrange(10**17, 10**18 * 2))
    head = base64.b64encode(user_id.encode()).decode().rstrip("=")
    return f"{head}.{urlsafe(6)}.{urlsafe(38)}"


def _base32(n: int) -> str:
    return _draw(string.ascii_lowercase + "234567", n)


_PW_WORDS = "bluemonkeyseven"  # letters only, and "key" inside: a variable name to the old check
_PW_PASS = "S3cr3tPassw0rd"  # "Pass" inside: the same
_DOCKER_AUTH = base64.b64encode(b"deploy:Riv3rBend-" + alnum(12).encode()).decode()
_NPM_AUTH = base64.b64encode(b"ci-bot:" + alnum(20).encode()).decode()
_SA_JSON = base64.b64encode(
    json.dumps(
        {"type": "service_account", "project_id": "acme-analytics", "private_key_id": hexs(40),
         "private_key": _pem_text(_p("PRIV", "ATE KEY")), "client_email": "etl@acme-analytics.iam.gserviceaccount.com"},
        indent=2,
    ).encode()
).decode()

_B64PEM_KUBE = _b64_pem(_p("RSA PRIV", "ATE KEY"))
_B64PEM_TLS = _b64_pem(_p("PRIV", "ATE KEY"))
_B64PEM_SSH = _b64_pem(_p("OPENSSH PRIV", "ATE KEY"))
_PKCS8_BODY = _der_b64(_PKCS8, 1180)
_PKCS1_BODY = _der_b64(_PKCS1, 1180)
_SEC1_BODY = _der_b64(_SEC1, 113)
_SSH_BODY = _ssh_body()
_JWK_D, _JWK_P, _JWK_EC_D = urlsafe(342), urlsafe(171), urlsafe(43)

CORPUS: dict[str, tuple[str, tuple[str, ...]]] = {}


def _add(name: str, text: str, *secrets: str) -> None:
    assert name not in CORPUS, name
    assert all(s in text for s in secrets), name
    CORPUS[name] = (text, secrets)


# -- environment variables and .env files: a name with prefixes and suffixes
_add("env-suffix-prod", "DB_PASSWORD_PROD=Wint3r!sC0ming", "Wint3r!sC0ming")
_add("env-pwd-suffix", "export REDSHIFT_PWD_PROD='Quartz-Lake-88'", "Quartz-Lake-88")
_add("env-pass-word-value", f"RABBITMQ_DEFAULT_PASS={_PW_WORDS}", _PW_WORDS)
_add("env-laravel-app-key", "APP_KEY=base64:" + (k := b64(43) + "="), k)
_add("env-secret-key-base", "SECRET_KEY_BASE=" + (k := hexs(128)), k)
_add("env-azure-devops-pat", "export AZURE_DEVOPS_EXT_PAT=" + (k := _base32(52)), k)
_add("env-credentials-b64", "GOOGLE_CREDENTIALS_B64=" + _SA_JSON, _SA_JSON)
_add("env-token-suffix", "export SLACK_TOKEN_ALERTS=" + (k := alnum(40)), k)
_add("env-secret-suffix", "JWT_SECRET_V2=" + (k := urlsafe(48)), k)
_add("compose-root-password", "services:\n  db:\n    environment:\n      MYSQL_ROOT_PASSWORD: " + _PW_PASS, _PW_PASS)
_add("dotenv-quoted-word", f'SMTP_PASSWORD="{_PW_WORDS}"', _PW_WORDS)
# -- YAML
_add("yaml-password-suffix", "cache:\n  redis_password_prod: blu3Falcon77\n", "blu3Falcon77")
_add("yaml-secret-key-base", "production:\n  secret_key_base: " + (k := hexs(128)) + "\n", k)
_add("yaml-ansible-become-pass", "all:\n  vars:\n    ansible_become_pass: Riv3rBend!\n", "Riv3rBend!")
_add("yaml-kubeconfig-client-key", "users:\n- name: admin\n  user:\n    client-certificate-data: "
     + base64.b64encode(b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n").decode()
     + "\n    client-key-data: " + _B64PEM_KUBE + "\n", _B64PEM_KUBE)
_add("yaml-k8s-secret-tls", "apiVersion: v1\nkind: Secret\ntype: kubernetes.io/tls\ndata:\n  tls.crt: "
     + b64(80) + "\n  tls.key: " + _B64PEM_TLS + "\n", _B64PEM_TLS)
_add("yaml-k8s-secret-ssh", "kind: Secret\ntype: kubernetes.io/ssh-auth\ndata:\n  ssh-privatekey: " + _B64PEM_SSH,
     _B64PEM_SSH)
_add("yaml-yarnrc-npm-auth-token", 'npmRegistryServer: "https://npm.acme.io"\nnpmAuthToken: "' + (k := urlsafe(40)) + '"',
     k)
_add("yaml-camel-client-secret", "oauth:\n  clientId: etl-dashboard\n  clientSecret: " + (k := urlsafe(40)), k)
_add("yaml-quoted-suffix", 'airflow:\n  fernet_key_prod: "' + (k := urlsafe(43) + "=") + '"', k)
# -- TOML and INI
_add("toml-pass", '[postgres]\nhost = "db.internal"\nuser = "etl"\npass = "Riv3rBend-42"\n', "Riv3rBend-42")
_add("toml-token-suffix", '[tool.poetry.http-basic.acme]\nusername = "ci"\npassword = "' + (k := alnum(32)) + '"', k)
_add("ini-smtp-pass", "[smtp]\nhost = smtp.acme.org\nsmtp_user = alerts\nsmtp_pass = Tr4inStation\n", "Tr4inStation")
_add("ini-word-password", f"[mysql]\nuser = etl\npassword = {_PW_WORDS}\n", _PW_WORDS)
_add("ini-auth-suffix", "[api]\nauth_key_live = " + (k := alnum(36)), k)
# -- JSON
_add("json-camel-client-secret", '{"clientId": "etl", "clientSecret": "' + (k := urlsafe(40)) + '"}', k)
_add("json-minio-access", '{"url": "http://minio:9000", "accessKey": "etl", "secretKey": "' + (k := alnum(40)) + '"}', k)
_add("json-docker-auth", '{\n  "auths": {\n    "registry.acme.io": {\n      "auth": "' + _DOCKER_AUTH + '"\n    }\n  }\n}',
     _DOCKER_AUTH)
_add("json-jwk-rsa", '{"kty": "RSA", "kid": "sig-2024", "n": "' + urlsafe(342) + '", "e": "AQAB", "d": "' + _JWK_D
     + '", "p": "' + _JWK_P + '"}', _JWK_D, _JWK_P)
_add("json-jwk-ec", '{"kty":"EC","crv":"P-256","x":"' + urlsafe(43) + '","y":"' + urlsafe(43) + '","d":"' + _JWK_EC_D
     + '"}', _JWK_EC_D)
_add("json-private-key-body", '{"privateKey": "' + _PKCS8_BODY + '"}', _PKCS8_BODY)
_add("json-db-pass-word", '{"host": "db", "user": "etl", "dbPass": "' + _PW_WORDS + '"}', _PW_WORDS)
# -- XML: elements and attributes
_add("xml-password-element", "<datasource>\n  <user>etl</user>\n  <password>Gr33nApple#2024</password>\n</datasource>",
     "Gr33nApple#2024")
_add("xml-appsettings-add", '<appSettings>\n  <add key="WarehousePassword" value="Pl8num-Sky" />\n</appSettings>',
     "Pl8num-Sky")
_add("xml-nuget-cleartext", '<packageSourceCredentials><acme><add key="Username" value="ci" />'
     '<add key="ClearTextPassword" value="' + (k := alnum(24)) + '" /></acme></packageSourceCredentials>', k)
_add("xml-maven-settings", "<servers>\n  <server>\n    <id>nexus</id>\n    <username>deploy</username>\n"
     f"    <password>{_PW_WORDS}</password>\n  </server>\n</servers>", _PW_WORDS)
_add("xml-properties-entry", '<properties>\n  <entry key="db.password">Riv3rBend</entry>\n</properties>', "Riv3rBend")
_add("xml-spring-property", '<property name="password" value="Quartz-Lake-88"/>', "Quartz-Lake-88")
_add("xml-jenkins-api-token", "<hudson.model.User>\n  <apiToken>" + (k := hexs(34)) + "</apiToken>\n</hudson.model.User>",
     k)
_add("xml-filezilla-pass", '<Server><Host>ftp.acme.org</Host><User>etl</User><Pass encoding="base64">'
     + (k := base64.b64encode(b"Riv3rBend-ftp").decode()) + "</Pass></Server>", k)
# -- Java properties and dotted settings
_add("properties-spaced", f"hibernate.connection.password = {_PW_WORDS}", _PW_WORDS)
_add("properties-colon", "keystore.password: Ch4ngedIt0nce", "Ch4ngedIt0nce")
_add("properties-secret-key", "fs.s3a.secret.key=" + (k := b64(40)), k)
# -- connection strings
_add("odbc-braced-pwd", "Driver={ODBC Driver 18 for SQL Server};Server=tcp:db,1433;Uid=etl;PWD={Qx7!mZ2p;x};",
     "Qx7!mZ2p")
_add("ado-word-password", f"Server=db.acme.net;Database=sales;User Id=etl;Password={_PW_WORDS};", _PW_WORDS)
_add("npgsql-last-password", f"Host=db;Username=etl;Password={_PW_PASS}", _PW_PASS)
_add("jdbc-oracle-thin", "jdbc:oracle:thin:scott/Orcl2024pw@//db.acme.net:1521/ORCL", "Orcl2024pw")
_add("signalr-access-key", "Endpoint=https://acme.service.signalr.net;AccessKey=" + (k := b64(43) + "=")
     + ";Version=1.0;", k)
# -- URL query parameters
_add("url-query-key", "curl 'https://api.openweather.example/data/2.5/weather?q=Berlin&appid=" + (k := hexs(32)) + "'",
     k)
_add("url-query-auth", "https://acme-prod.firebaseio.com/users.json?auth=" + (k := alnum(40)), k)
_add("url-query-private-token", "https://gitlab.acme.io/api/v4/projects?private_token=" + (k := urlsafe(20)), k)
_add("url-query-short-key", "https://maps.example.com/api/geocode?address=Berlin&key=" + (k := alnum(32)), k)
_add("url-azure-functions-code", "https://etl-fn.azurewebsites.net/api/refresh?code=" + (k := urlsafe(54) + "=="), k)
_add("url-gcs-signed", "https://storage.googleapis.com/acme-exports/q3.csv?X-Goog-Algorithm=GOOG4-RSA-SHA256"
     "&X-Goog-Credential=etl%40acme.iam.gserviceaccount.com%2F20240613%2Fauto%2Fstorage%2Fgoog4_request"
     "&X-Goog-Date=20240613T101500Z&X-Goog-Expires=3600&X-Goog-SignedHeaders=host&X-Goog-Signature="
     + (k := hexs(512)), k)
_add("url-s3-presigned", "https://acme-exports.s3.amazonaws.com/q3.csv?X-Amz-Algorithm=AWS4-HMAC-SHA256"
     "&X-Amz-Date=20240613T101500Z&X-Amz-Expires=3600&X-Amz-SignedHeaders=host&X-Amz-Signature=" + (k := hexs(64)), k)
# -- webhook URLs: the path or the query is the token
_add("webhook-zapier", "POST the metrics to https://hooks.zapier.com/hooks/catch/" + (k := f"{_rng.randrange(10**6, 10**7)}/{lower(7)}") + "/",
     k)
_add("webhook-ifttt", "https://maker.ifttt.com/trigger/model_done/with/key/" + (k := urlsafe(22)), k)
_add("webhook-mattermost", "curl -i -X POST -d 'payload={\"text\": \"done\"}' https://chat.acme.org/hooks/"
     + (k := lower(26)), k)
_add("webhook-webex", "https://webexapis.com/v1/webhooks/incoming/" + (k := urlsafe(120)), k)
_add("webhook-rocketchat", "https://rocket.acme.org/hooks/" + (k := f"{alnum(17)}/{alnum(48)}"), k)
_add("webhook-generic", "requests.post('https://api.acme.io/webhooks/" + (k := urlsafe(40)) + "', json=msg)", k)
_add("conda-channel-token", "channel_alias: https://conda.anaconda.org/t/" + (k := f"{lower(2)}-{hexs(8)}-{hexs(4)}-{hexs(4)}-{hexs(4)}-{hexs(12)}") + "/",
     k)
_add("url-token-as-user", "git clone https://" + (k := _base32(52)) + "@dev.azure.com/acme/etl/_git/pipelines", k)
# -- command lines
_add("mysql-pass-inside", f"mysql -u admin -p{_PW_PASS} -h db.internal sales", _PW_PASS)
_add("sqlcmd-P", "sqlcmd -S db.acme.net -U sa -P 'Yuk0n!Data' -Q \"SELECT 1\"", "Yuk0n!Data")
_add("az-login-p", "az login --service-principal -u http://etl-sp -p '" + (k := urlsafe(34) + "~x") + "' --tenant acme.onmicrosoft.com",
     k)
_add("ldapsearch-w", 'ldapsearch -x -H ldap://ldap.acme.org -D "cn=admin,dc=acme,dc=org" -w L3dgerStone -b dc=acme,dc=org',
     "L3dgerStone")
_add("openssl-passin", "openssl pkcs12 -in client.p12 -out client.pem -nodes -passin pass:Tang0Kilo9", "Tang0Kilo9")
_add("openssl-passout", "openssl genrsa -aes256 -passout pass:" + _PW_WORDS + " -out ca.key 4096", _PW_WORDS)
_add("keytool-storepass", "keytool -importkeystore -srckeystore old.jks -destkeystore new.p12 -storepass Ch4ngedIt0nce",
     "Ch4ngedIt0nce")
_add("smbclient-U", "smbclient //files.acme.org/finance -U ana%Riv3rBend -c 'get q3.xlsx'", "Riv3rBend")
_add("zip-P", "zip -r -P Sn0wyOwl42 exports.zip data/exports/", "Sn0wyOwl42")
_add("7z-p", "7z a -pSn0wyOwl42 -mhe=on exports.7z data/exports/", "Sn0wyOwl42")
_add("htpasswd-b", "htpasswd -bc /etc/nginx/.htpasswd ana Riv3rBend", "Riv3rBend")
_add("sqlplus-slash", "sqlplus system/Orcl2024pw@//db.acme.net:1521/ORCL @report.sql", "Orcl2024pw")
_add("ssh-keygen-N", "ssh-keygen -t ed25519 -N 'Tr4ilMix-77' -f ~/.ssh/deploy", "Tr4ilMix-77")
_add("net-use-user", "net use Z: \\\\files\\finance /user:ACME\\ana Riv3rBend!", "Riv3rBend!")
_add("mc-alias-set", "mc alias set acme http://minio:9000 etl-user " + (k := alnum(40)), k)
_add("nmcli-password", "nmcli dev wifi connect AcmeGuest password Riv3rBend77", "Riv3rBend77")
_add("psql-env-word", f"PGPASSWORD={_PW_WORDS} psql -h db -U etl sales", _PW_WORDS)
# -- calls in code
_add("requests-auth-tuple", "r = requests.get(url, auth=('etl', 'Mang0Tree!'))", "Mang0Tree!")
_add("httpx-auth-tuple", 'client = httpx.Client(auth=("etl", "' + _PW_WORDS + '"))', _PW_WORDS)
_add("basic-auth-call", 'requests.get(url, auth=HTTPBasicAuth("etl", "Riv3rBend-42"))', "Riv3rBend-42")
_add("smtp-login", 'server.login("alerts@acme.org", "Sm0keSignal")', "Sm0keSignal")
_add("spark-azure-account-key", 'spark.conf.set("fs.azure.account.key.acmelake.dfs.core.windows.net", "'
     + (k := b64(86) + "==") + '")', k)
_add("spark-s3a-secret", 'sc._jsc.hadoopConfiguration().set("fs.s3a.secret.key", "' + (k := b64(40)) + '")', k)
# -- .npmrc and other rc files
_add("npmrc-auth-token", "//npm.acme.io/repository/npm/:_authToken=" + (k := f"{hexs(8)}-{hexs(4)}-{hexs(4)}-{hexs(4)}-{hexs(12)}"),
     k)
_add("npmrc-auth", "registry=https://npm.acme.io/\n_auth=" + _NPM_AUTH + "\nalways-auth=true", _NPM_AUTH)
# -- key material: base64 of PEM, bodies without armour
_add("bare-pkcs8-body", "the key we load in the job:\n" + _wrapped(_PKCS8_BODY), *_wrapped(_PKCS8_BODY).splitlines())
_add("bare-pkcs1-one-line", "signing_material = '" + _PKCS1_BODY + "'", _PKCS1_BODY)
_add("bare-ec-body", _wrapped(_SEC1_BODY), *_wrapped(_SEC1_BODY).splitlines())
_add("bare-openssh-body", "paste this into the deploy box:\n" + _wrapped(_SSH_BODY, 70), *_wrapped(_SSH_BODY, 70).splitlines())
_add("b64-pem-echo", "echo " + (k := _b64_pem(_p("EC PRIV", "ATE KEY"))) + " | base64 -d > key.pem", k)
_add("b64-sa-json-echo", "echo '" + _SA_JSON + "' | base64 --decode > sa.json", _SA_JSON)
# -- vendor shapes the table lacked
_add("bitbucket-app-password", "git remote set-url origin https://ana@bitbucket.org/acme/etl.git  # "
     + (k := _p("AT", "BB") + alnum(32)), k)
_add("circleci-pat", "CIRCLE_TOKEN is " + (k := _p("CCI", "PAT_") + alnum(22) + "_" + hexs(40)), k)
_add("sonarqube-user-token", "sonar-scanner -Dsonar.host.url=https://sonar.acme.io -Dsonar.token="
     + (k := _p("sq", "u_") + hexs(40)), k)
_add("tailscale-auth-key", "tailscale up --authkey " + (k := _p("tskey-", "auth-") + alnum(12) + "CNTRL-" + alnum(33)), k)
_add("netlify-pat", "netlify deploy --auth " + (k := _p("nf", "p_") + alnum(36)) + " --prod", k)
_add("figma-pat", "headers = {'X-Figma-Token': '" + (k := _p("fig", "d_") + urlsafe(40)) + "'}", k)
_add("okta-ssws", "curl -H 'Authorization: " + _p("SS", "WS") + " " + (k := "00" + urlsafe(40)) + "' https://acme.okta.com/api/v1/users",
     k)
_add("discord-bot-token", "client.run('" + (k := _discord_bot()) + "')", k)
_add("azure-devops-pat-new", "the pipeline uses " + (k := alnum(52) + _p("JQQ", "J99") + alnum(18) + _p("AZ", "DO") + alnum(4)),
     k)
_add("render-key", "RENDER_API = " + (k := _p("rn", "d_") + alnum(32)), k)
_add("buildkite-token", "buildkite-agent start --token " + (k := _p("bk", "ua_") + hexs(40)), k)
_add("asana-pat", "asana = Client.access_token('" + (k := f"2/{_rng.randrange(10**15, 10**16)}/{_rng.randrange(10**15, 10**16)}:{hexs(32)}") + "')",
     k)
_add("telegram-35-underscore", "bot = telebot.TeleBot('" + (k := f"{_rng.randrange(10**8, 10**9)}:AAH" + "_"
     + alnum(12) + "-" + alnum(18)) + "')", k)
# -- prose
_add("prose-word-password", f"The prod DB password is {_PW_WORDS}", _PW_WORDS)
