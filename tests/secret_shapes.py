"""Fake secrets in every shape the scanner knows, built at run time.

Every token here is assembled from a split prefix and characters drawn from a
seeded generator, so this repository never holds a literal token that a secret
scanner (ours, gitleaks, GitHub's push protection) would flag, and no value is a
real credential. The formats follow gitleaks' rule set (config/gitleaks.toml).

``SHAPES`` maps a name to ``(kind, token, secret)``: ``kind`` is what
``find_secrets`` must report, ``token`` the text as someone would paste it and
``secret`` the part of it that must disappear from a redacted text (the token
itself, or the credential part of a URL). ``PROSE``
holds keyword-value sentences, where the secret has no prefix of its own.
``CLEAN`` is a corpus of ordinary data-science statements full of things that
look a little like secrets (hashes, UUIDs, git SHAs, long column names,
base64-looking ids, paths, URLs without credentials) and hold none.
"""

from __future__ import annotations

import random
import string

_rng = random.Random(20260401)
_LOWER, _UPPER, _DIGITS = string.ascii_lowercase, string.ascii_uppercase, string.digits
_ALNUM = _LOWER + _UPPER + _DIGITS


def _draw(alphabet: str, n: int) -> str:
    # Redraw until letters and digits both occur: a real token almost always mixes them.
    while True:
        out = "".join(_rng.choices(alphabet, k=n))
        if n < 6 or not (set(alphabet) & set(_DIGITS)) or (any(c.isdigit() for c in out) and any(c.isalpha() for c in out)):
            return out


def alnum(n: int) -> str:
    return _draw(_ALNUM, n)


def hexs(n: int) -> str:
    return _draw("0123456789abcdef", n)


def upper(n: int) -> str:
    return _draw(_UPPER + _DIGITS, n)


def lower(n: int) -> str:
    return _draw(_LOWER + _DIGITS, n)


def b64(n: int) -> str:
    return _draw(_ALNUM + "+/", n)


def urlsafe(n: int) -> str:
    return _draw(_ALNUM + "_-", n)


def digits(n: int) -> str:
    return "".join(_rng.choice(_DIGITS) for _ in range(n))


def uuid() -> str:
    return f"{hexs(8)}-{hexs(4)}-4{hexs(3)}-a{hexs(3)}-{hexs(12)}"


def pem(label: str) -> str:
    body = "\n".join(b64(64) for _ in range(4))
    return f"-----BEGIN {label}-----\n{body}\n-----END {label}-----"


def _p(*parts: str) -> str:
    """Join a prefix that is split in the source, so the file holds no whole prefix."""
    return "".join(parts)


def lines(n: int, width: int = 64) -> str:
    return "\n".join(b64(width) for _ in range(n))


def ssh2(label: str) -> str:
    """The ssh.com (SecSH) key file: four dashes and spaces, header lines, then the body."""
    return (f"---- BEGIN {label} ----\nComment: \"rsa-key-20240613\"\n{lines(5, 70)}\n"
            f"---- END {label} ----")


def pgp_block() -> str:
    """An ASCII-armored PGP private key: armor headers, a blank line, the body, a checksum."""
    label = _p("PGP PRIV", "ATE KEY BLOCK")
    return f"-----BEGIN {label}-----\nVersion: GnuPG v2\n\n{lines(6)}\n={b64(4)}\n-----END {label}-----"


def encrypted_rsa_pem() -> str:
    """OpenSSL's legacy encrypted PEM: Proc-Type and DEK-Info headers before the body."""
    label = _p("RSA PRIV", "ATE KEY")
    return (f"-----BEGIN {label}-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,{hexs(32).upper()}\n\n"
            f"{lines(5)}\n-----END {label}-----")


def putty(version: int, algorithm: str) -> str:
    """A PuTTY .ppk file: public lines, then (v3) the Argon2 parameters, private lines, a MAC."""
    head = _p("PuTTY-User-", f"Key-File-{version}: {algorithm}\n")
    head += f"Encryption: aes256-cbc\nComment: {algorithm}-key-20240613\nPublic-Lines: 2\n{lines(2)}\n"
    if version == 3:
        head += "Key-Derivation: Argon2id\nArgon2-Memory: 8192\nArgon2-Passes: 13\nArgon2-Parallelism: 1\n"
        head += f"Argon2-Salt: {hexs(32)}\n"
    return head + f"Private-Lines: 2\n{lines(1)}\n{b64(44)}\nPrivate-MAC: {hexs(64)}"


_SHAPES: dict[str, tuple[str, str]] = {
    # private keys and key files
    "rsa-pem": ("private-key", pem(_p("RSA PRIV", "ATE KEY"))),
    "openssh": ("private-key", pem(_p("OPENSSH PRIV", "ATE KEY"))),
    "ec-pem": ("private-key", pem(_p("EC PRIV", "ATE KEY"))),
    "pkcs8-encrypted": ("private-key", pem(_p("ENCRYPTED PRIV", "ATE KEY"))),
    "pgp": ("private-key", pem(_p("PGP PRIV", "ATE KEY BLOCK"))),
    "putty": ("putty-key", _p("PuTTY-User-", "Key-File-2: ssh-rsa\nEncryption: none\nPrivate-Lines: 2\n")
              + b64(64) + "\n" + b64(40)),
    "ssh2-encrypted": ("private-key", ssh2(_p("SSH2 ENCRYPTED PRIV", "ATE KEY"))),
    "ssh2-plain": ("private-key", ssh2(_p("SSH2 PRIV", "ATE KEY"))),
    "pgp-armored": ("private-key", pgp_block()),
    "rsa-encrypted-pem": ("private-key", encrypted_rsa_pem()),
    "dsa-pem": ("private-key", pem(_p("DSA PRIV", "ATE KEY"))),
    "pkcs8": ("private-key", pem(_p("PRIV", "ATE KEY"))),
    # a key inside a Python or JSON string: the line breaks are written as \n
    "pkcs8-escaped": ("private-key", pem(_p("PRIV", "ATE KEY")).replace("\n", "\\n")),
    "putty-v2-rsa": ("putty-key", putty(2, "ssh-rsa")),
    "putty-v3-ed25519": ("putty-key", putty(3, "ssh-ed25519")),
    "putty-v3-escaped": ("putty-key", putty(3, "ecdsa-sha2-nistp256").replace("\n", "\\n")),
    "age": ("age-secret-key", _p("AGE-SECRET-", "KEY-1") + "".join(_rng.choice("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L")
                                                                   for _ in range(58))),
    "jwt": ("jwt", _p("ey", "J") + urlsafe(20) + _p(".ey", "J") + urlsafe(30) + "." + urlsafe(43)),
    # clouds
    "aws-akia": ("aws-access-key", _p("AK", "IA") + upper(16)),
    "aws-asia": ("aws-access-key", _p("AS", "IA") + upper(16)),
    "aws-session-token": ("aws-session-token", _p("IQoJb3Jp", "Z2luX2Vj") + b64(300) + "=="),
    "aws-session-token-legacy": ("aws-session-token", _p("FwoGZXIv", "YXdzE") + b64(200)),
    "aws-bedrock": ("aws-bedrock-key", _p("AB", "SK") + b64(120)),
    "azure-client-secret": ("azure-client-secret", alnum(3) + "8" + _p("Q", "~") + urlsafe(34)),
    "azure-storage": ("azure-storage-key", _p("Account", "Key=") + b64(86) + "=="),
    "azure-sas": ("azure-sas-token", "https://acct.blob.core.windows.net/c/f.csv?sv=2022-11-02&sp=r&" + _p("si", "g=")
                  + alnum(40) + "%3D"),
    "azure-shared-access-key": ("azure-shared-access-key", "Endpoint=sb://acme.servicebus.windows.net/;"
                                "SharedAccessKeyName=RootManageSharedAccessKey;" + _p("SharedAccess", "Key=")
                                + b64(43) + "="),
    "google-api-key": ("google-api-key", _p("AI", "za") + urlsafe(35)),
    "google-oauth-secret": ("google-oauth-secret", _p("GOC", "SPX-") + urlsafe(28)),
    "google-oauth-token": ("google-oauth-token", _p("ya", "29.") + urlsafe(60)),
    "google-refresh": ("google-refresh-token", _p("1/", "/0") + urlsafe(60)),
    "alibaba": ("alibaba-access-key", _p("LT", "AI") + alnum(20)),
    "digitalocean-pat": ("digitalocean-token", _p("dop", "_v1_") + hexs(64)),
    "digitalocean-oauth": ("digitalocean-token", _p("doo", "_v1_") + hexs(64)),
    "heroku": ("heroku-key", _p("HR", "KU-AA") + urlsafe(58)),
    "cloudflare-origin": ("cloudflare-origin-key", _p("v1", ".0-") + hexs(24) + "-" + hexs(146)),
    "flyio": ("flyio-token", _p("fo", "1_") + urlsafe(43)),
    "vault": ("vault-token", _p("hv", "s.") + urlsafe(95)),
    "terraform": ("terraform-token", lower(14) + _p(".atlas", "v1.") + lower(64)),
    "databricks": ("databricks-token", _p("da", "pi") + hexs(32)),
    "databricks-oauth": ("databricks-token", _p("do", "se") + hexs(32)),
    "supabase-pat": ("supabase-token", _p("sb", "p_") + hexs(40)),
    "supabase-secret": ("supabase-token", _p("sb_sec", "ret_") + urlsafe(32)),
    "onepassword": ("onepassword-key", _p("A", "3-") + "-".join([upper(6), upper(11), upper(5), upper(5), upper(5)])),
    "doppler": ("doppler-token", _p("dp", ".pt.") + alnum(43)),
    "planetscale": ("planetscale-token", _p("pscale", "_tkn_") + urlsafe(43)),
    "pulumi": ("pulumi-token", _p("pu", "l-") + hexs(40)),
    "scalingo": ("scalingo-token", _p("tk-", "us-") + urlsafe(48)),
    # code hosting and registries
    "github-pat": ("github-token", _p("gh", "p_") + alnum(36)),
    "github-oauth": ("github-token", _p("gh", "o_") + alnum(36)),
    "github-app": ("github-token", _p("gh", "s_") + alnum(36)),
    "github-refresh": ("github-token", _p("gh", "r_") + alnum(36)),
    "github-fine-grained": ("github-token", _p("github", "_pat_") + alnum(22) + "_" + alnum(59)),
    "gitlab-pat": ("gitlab-token", _p("gl", "pat-") + urlsafe(20)),
    "gitlab-runner": ("gitlab-token", _p("gl", "rt-") + urlsafe(20)),
    "gitlab-deploy": ("gitlab-token", _p("gl", "dt-") + urlsafe(20)),
    "gitlab-runner-registration": ("gitlab-token", _p("GR13", "48941") + urlsafe(20)),
    "atlassian": ("atlassian-token", _p("ATA", "TT3") + urlsafe(186)),
    "npm": ("npm-token", _p("np", "m_") + alnum(36)),
    "pypi": ("pypi-token", _p("pypi-", "AgEIcHlwaS5vcmc") + urlsafe(70)),
    "rubygems": ("rubygems-token", _p("rubygems", "_") + hexs(48)),
    "nuget": ("nuget-key", _p("oy", "2") + lower(43)),
    "clojars": ("clojars-token", _p("CLOJARS", "_") + lower(60)),
    "dockerhub": ("dockerhub-token", _p("dckr", "_pat_") + urlsafe(27)),
    "sourcegraph": ("sourcegraph-token", _p("sg", "p_") + hexs(40)),
    "readme": ("readme-token", _p("rd", "me_") + lower(70)),
    "postman": ("postman-token", _p("PM", "AK-") + hexs(24) + "-" + hexs(34)),
    "linear": ("linear-token", _p("lin", "_api_") + alnum(40)),
    "notion": ("notion-token", _p("nt", "n_") + digits(11) + alnum(35)),
    "sentry": ("sentry-token", _p("sntr", "yu_") + hexs(64)),
    "grafana-sa": ("grafana-token", _p("gl", "sa_") + alnum(32) + "_" + hexs(8)),
    "grafana-cloud": ("grafana-token", _p("gl", "c_") + b64(40)),
    "newrelic": ("newrelic-key", _p("NR", "AK-") + upper(27)),
    "dynatrace": ("dynatrace-token", _p("dt0", "c01.") + upper(24) + "." + alnum(64)),
    "infracost": ("infracost-token", _p("ic", "o-") + alnum(32)),
    "octopus": ("octopus-key", _p("AP", "I-") + upper(26)),
    "prefect": ("prefect-token", _p("pn", "u_") + alnum(36)),
    "frameio": ("frameio-token", _p("fio", "-u-") + urlsafe(64)),
    "openshift": ("openshift-token", _p("sha256", "~") + urlsafe(43)),
    "harness": ("harness-token", _p("pa", "t.") + urlsafe(22) + "." + alnum(24) + "." + alnum(20)),
    "airtable": ("airtable-token", _p("pa", "t") + alnum(14) + "." + hexs(64)),
    "hubspot-na1": ("hubspot-token", _p("pat-", "na1-") + uuid()),
    "hubspot-eu1": ("hubspot-token", _p("pat-", "eu1-") + uuid()),
    "contentful": ("contentful-token", _p("CFP", "AT-") + urlsafe(43)),
    "mapbox-secret": ("mapbox-token", _p("sk.ey", "J1Ijoi") + urlsafe(50) + "." + urlsafe(22)),
    "mapbox-temporary": ("mapbox-token", _p("tk.ey", "J1Ijoi") + urlsafe(70) + "." + urlsafe(22)),
    "dropbox-short-lived": ("dropbox-token", _p("s", "l.") + "B" + urlsafe(137)),
    "dropbox-short-lived-u": ("dropbox-token", _p("s", "l.u.") + "AF" + urlsafe(300)),
    "dropbox-long-lived": ("dropbox-token", lower(11) + _p("AAAAA", "AAAAA") + urlsafe(43)),
    "maxmind": ("maxmind-key", alnum(6) + "_" + alnum(29) + _p("_m", "mk")),
    # chat and messaging
    "slack-bot": ("slack-token", _p("xo", "xb-") + digits(12) + "-" + digits(13) + "-" + alnum(24)),
    "slack-user": ("slack-token", _p("xo", "xp-") + digits(12) + "-" + digits(12) + "-" + digits(12) + "-" + hexs(32)),
    "slack-app": ("slack-app-token", _p("xa", "pp-1-") + upper(11) + "-" + digits(13) + "-" + hexs(64)),
    "slack-webhook": ("slack-webhook", "https://" + _p("hooks.sl", "ack.com/services/") + "T" + upper(8) + "/B"
                      + upper(10) + "/" + alnum(24)),
    "discord-webhook": ("discord-webhook", "https://discord.com" + _p("/api/web", "hooks/") + digits(18) + "/"
                        + urlsafe(68)),
    "teams-webhook": ("teams-webhook", "https://acme" + _p(".webhook.of", "fice.com/webhookb2/") + uuid() + "@"
                      + uuid() + "/IncomingWebhook/" + hexs(32) + "/" + uuid()),
    "telegram": ("telegram-bot-token", digits(10) + _p(":A", "A") + urlsafe(33)),
    # Telegram's own documentation shows 34 characters after the colon; older tokens need not start with A.
    "telegram-34": ("telegram-bot-token", digits(9) + _p(":A", "A") + urlsafe(32)),
    "telegram-not-a": ("telegram-bot-token", digits(8) + ":" + _p("Bx", "Q") + urlsafe(32)),
    "fcm-server-key": ("fcm-server-key", _p("AA", "AA") + urlsafe(7) + _p(":APA", "91b") + urlsafe(134)),
    "twilio-api-key": ("twilio-key", _p("S", "K") + hexs(32)),
    "sendgrid": ("sendgrid-key", _p("S", "G.") + urlsafe(22) + "." + urlsafe(43)),
    "brevo": ("sendinblue-key", _p("xkey", "sib-") + hexs(64) + "-" + alnum(16)),
    "mailgun": ("mailgun-key", _p("ke", "y-") + hexs(32)),
    "mailchimp": ("mailchimp-key", hexs(32) + _p("-u", "s21")),
    # payments and commerce
    "stripe-secret": ("stripe-key", _p("sk", "_live_") + alnum(24)),
    "stripe-restricted": ("stripe-key", _p("rk", "_live_") + alnum(24)),
    "stripe-webhook": ("stripe-key", _p("wh", "sec_") + alnum(32)),
    "shopify": ("shopify-token", _p("shp", "at_") + hexs(32)),
    "square": ("square-token", _p("sq0", "atp-") + urlsafe(22)),
    "facebook": ("facebook-token", _p("EA", "AM") + alnum(120)),
    "shippo": ("shippo-token", _p("shippo", "_live_") + hexs(40)),
    "easypost": ("easypost-key", _p("EZ", "AK") + alnum(54)),
    "flutterwave": ("flutterwave-key", _p("FLWSECK", "_TEST-") + hexs(32) + "-X"),
    "duffel": ("duffel-token", _p("duffel", "_live_") + urlsafe(43)),
    "plaid": ("plaid-token", _p("access-", "sandbox-") + uuid()),
    # AI and data services
    "anthropic": ("anthropic-key", _p("sk-", "ant-api03-") + urlsafe(93) + "AA"),
    "openai-project": ("openai-key", _p("sk-", "proj-") + urlsafe(58) + _p("T3Blbk", "FJ") + urlsafe(58)),
    # a key can hold no digit at all: letters of both cases are as random
    "openai-project-letters": ("openai-key", _p("sk-", "proj-") + _draw(string.ascii_letters, 40)),
    "openai-service-account": ("openai-key", _p("sk-", "svcacct-") + urlsafe(74)),
    "openai-admin": ("openai-key", _p("sk-", "admin-") + _draw(string.ascii_letters + "_-", 60)),
    "anthropic-letters": ("anthropic-key", _p("sk-", "ant-api03-") + _draw(string.ascii_letters, 60)),
    "huggingface": ("huggingface-token", _p("h", "f_") + _draw(string.ascii_letters, 34)),
    "huggingface-org": ("huggingface-token", _p("api", "_org_") + _draw(string.ascii_letters, 34)),
    "replicate": ("replicate-token", _p("r", "8_") + alnum(37)),
    "groq": ("groq-key", _p("gs", "k_") + alnum(52)),
    "xai": ("xai-key", _p("xa", "i-") + alnum(80)),
    "perplexity": ("perplexity-key", _p("pp", "lx-") + alnum(48)),
    "langsmith": ("langsmith-key", _p("lsv", "2_pt_") + hexs(32) + "_" + hexs(10)),
    "pinecone": ("pinecone-key", _p("pc", "sk_") + alnum(60)),
    # CI, code quality, networks and design tools (issue 31, part 3)
    "bitbucket": ("bitbucket-token", _p("AT", "BB") + alnum(32)),
    "circleci": ("circleci-token", _p("CCI", "PAT_") + alnum(22) + "_" + hexs(40)),
    "sonarqube": ("sonarqube-token", _p("sq", "u_") + hexs(40)),
    "tailscale": ("tailscale-key", _p("tskey-", "auth-") + alnum(12) + "CNTRL-" + alnum(33)),
    "netlify": ("netlify-token", _p("nf", "p_") + alnum(36)),
    "figma": ("figma-token", _p("fig", "d_") + urlsafe(40)),
    "okta": ("okta-token", _p("SS", "WS ") + "00" + urlsafe(40)),
    "discord-bot": ("discord-bot-token", _p("MTE", "0") + "NjE5ODc2NTQzMjEwOTg3" + "." + urlsafe(6) + "." + urlsafe(38)),
    "azure-devops": ("azure-devops-token", alnum(52) + _p("JQQ", "J99") + alnum(18) + _p("AZ", "DO") + alnum(4)),
    "render": ("render-key", _p("rn", "d_") + alnum(32)),
    "buildkite": ("buildkite-token", _p("bk", "ua_") + hexs(40)),
    "asana": ("asana-token", "2/" + digits(16) + "/" + digits(16) + ":" + hexs(32)),
}

# Where a token sits inside a URL, the credential is what follows the host or the key.
_URL_SECRET = {"azure-sas": "sig=", "slack-webhook": "hooks.", "discord-webhook": "discord.com",
               "teams-webhook": ".webhook.", "azure-shared-access-key": _p("SharedAccess", "Key="),
               "okta": _p("SS", "WS ")}
SHAPES: dict[str, tuple[str, str, str]] = {
    name: (kind, token, token[token.index(_URL_SECRET[name]) + len(_URL_SECRET[name]):] if name in _URL_SECRET else token)
    for name, (kind, token) in _SHAPES.items()
}

AWS_SECRET = b64(40)
TWILIO_AUTH = hexs(32)
WANDB_KEY = hexs(40)
KAGGLE_KEY = hexs(32)

# (kind, text, secret): a secret without a prefix of its own, named by the words around it.
PROSE: list[tuple[str, str, str]] = [
    ("aws-secret-key", f"the AWS secret access key is {AWS_SECRET}", AWS_SECRET),
    ("aws-secret-key", f"AWS secret key: {AWS_SECRET} (rotate it monthly)", AWS_SECRET),
    ("aws-secret-key", f"aws_secret_access_key={AWS_SECRET}", AWS_SECRET),
    ("twilio-auth-token", f"The Twilio auth token is {TWILIO_AUTH}.", TWILIO_AUTH),
    ("wandb-key", f"run `wandb login {WANDB_KEY}` once per machine", WANDB_KEY),
    ("kaggle-key", '{"username": "ana", "key": "' + KAGGLE_KEY + '"}', KAGGLE_KEY),
    ("api-key", f"KAGGLE_KEY={KAGGLE_KEY}", KAGGLE_KEY),
    ("password", "The password for the staging warehouse is Tr0ub4dor3x.", "Tr0ub4dor3x"),
    ("password", "the passphrase was c0rrect-h0rse", "c0rrect-h0rse"),
    ("api-key", "Our API key is " + (k1 := alnum(28)) + ", ask Ana before using it.", k1),
    ("api-key", "the license key for the solver is " + (k2 := alnum(24)), k2),
    ("token", "The token for the staging API is " + (k3 := alnum(32)), k3),
    ("secret", "the client secret was " + (k4 := urlsafe(30)), k4),
    ("token", "my access token: " + (k5 := alnum(40)), k5),
    ("gitlab-token", "My GitLab token is " + _SHAPES["gitlab-pat"][1] + ".", _SHAPES["gitlab-pat"][1]),
    ("npm-token", "the npm token we publish with is " + _SHAPES["npm"][1], _SHAPES["npm"][1]),
    # -- passwords that are plain words: the syntax around them, not their letters, says what they are
    # netrc, one line and as the file is written
    ("password", "machine api.example.com login ana password marmalade", "marmalade"),
    ("password", "machine files.example.org\n  login ana\n  password dragonfly\n", "dragonfly"),
    ("password", "login etl_bot password " + (p1 := alnum(12)), p1),
    # environment variables, as a shell, a .env file or docker compose sets them
    ("password", "PGPASSWORD=marmalade psql -h db -U ana sales", "marmalade"),
    ("password", "export MYSQL_PWD=sunshine", "sunshine"),
    ("password", "DB_PASS=hunter", "hunter"),
    ("password", "DB_PASSWD=" + (p2 := alnum(10)), p2),
    ("password", "REDIS_PASS=dragonfly", "dragonfly"),
    ("password", "SMTP_PWD=letmein", "letmein"),
    ("password", "os.environ['PGPASSWORD'] = 'marmalade'", "marmalade"),
    ("password", "environment:\n  POSTGRES_PASSWORD: sunshine\n", "sunshine"),
    # command lines
    ("password", "mysql -u root -pmarmalade sales < dump.sql", "marmalade"),
    ("password", "mysqldump -u etl -p'sunshine' sales > sales.sql", "sunshine"),
    ("password", "mariadb -h db -u ana -pdragonfly", "dragonfly"),
    ("password", "wget --user=ana --password=marmalade https://files.example.org/x.csv", "marmalade"),
    ("password", "docker login -u ana -p sunshine registry.example.org", "sunshine"),
    ("password", "sshpass -p dragonfly ssh ana@gpu-box", "dragonfly"),
    ("password", "redis-cli -h cache -a marmalade ping", "marmalade"),
    # connection strings: ADO.NET, ODBC, JDBC, libpq, .pgpass, option calls
    ("password", "Server=tcp:sql.example.net,1433;Database=sales;User Id=ana;Password=marmalade;", "marmalade"),
    ("password", "Driver={ODBC Driver 18 for SQL Server};Server=db;UID=ana;PWD=sunshine", "sunshine"),
    ("password", "jdbc:sqlserver://db:1433;databaseName=sales;user=ana;password=dragonfly;", "dragonfly"),
    ("password", "jdbc:postgresql://db:5432/sales?user=ana&password=marmalade&ssl=true", "marmalade"),
    ("password", 'psycopg2.connect("host=db port=5432 dbname=sales user=ana password=sunshine")', "sunshine"),
    ("password", "db.example.com:5432:sales:ana:marmalade", "marmalade"),
    ("password", "*:*:*:postgres:" + (p3 := alnum(10)), p3),
    ("password", 'spark.read.format("jdbc").option("password", "' + (p4 := alnum(9) + "!") + '")', p4),
    # configuration files: my.cnf, YAML
    ("password", "[client]\nuser=ana\npassword=sunshine", "sunshine"),
    ("password", "warehouse:\n  user: ana\n  password: dragonfly\n", "dragonfly"),
    # prose
    ("password", "the password is marmalade", "marmalade"),
    ("password", "The password is Summer.", "Summer"),
    ("password", "The password is: tangerine", "tangerine"),
    ("password", "pw is letmein", "letmein"),
    ("password", "my pwd: " + (p5 := alnum(10)), p5),
    ("password", "the password is 48291736.", "48291736"),
    ("password", "the password is `sunshine`", "sunshine"),
    ("password", "the password for the demo account was 'dragonfly'", "dragonfly"),
    ("password", "The wifi password is correct-horse-battery-staple.", "correct-horse-battery-staple"),
    ("password", "The admin password is Tr!cky_Horse, ask Ana first", "Tr!cky_Horse"),
    # -- secrets that are hex or base64 without a prefix, told by what stands next to them
    ("twilio-auth-token", 'client = Client("' + _p("A", "C") + hexs(32) + '", "' + (t1 := hexs(32)) + '")', t1),
    ("gcp-service-account", '"private_key_id": "' + (g1 := hexs(40)) + '",', g1),
    ("algolia-key", 'client = SearchClient.create("' + upper(10) + '", "' + (a1 := hexs(32)) + '")', a1),
    ("auth-header", "curl -H 'Authorization: Token " + (h1 := alnum(40)) + "' https://api.example.org", h1),
]

AWS_ID = _p("AK", "IA") + upper(16)
PAIR_SECRET = b64(40)
GCP_KEY = pem(_p("PRIV", "ATE KEY")).replace("\n", "\\n") + "\\n"
TWILIO_SID = _p("A", "C") + hexs(32)
TWILIO_PAIR = hexs(32)
SESSION = _SHAPES["aws-session-token"][1]

# How the shapes are written in files and cells: several secrets, over several lines.
# name -> (text, the secrets in it); every one must be refused and redacted.
FORMS: dict[str, tuple[str, tuple[str, ...]]] = {
    "aws-credentials-file": (f"[default]\naws_access_key_id = {AWS_ID}\naws_secret_access_key = {PAIR_SECRET}\n"
                             f"aws_session_token = {SESSION}\nregion = eu-west-1\n", (AWS_ID, PAIR_SECRET, SESSION)),
    "aws-credentials-csv": (f"Access key ID,Secret access key\n{AWS_ID},{PAIR_SECRET}\n", (AWS_ID, PAIR_SECRET)),
    "aws-console-csv": ("User name,Password,Access key ID,Secret access key,Console login link\n"
                        f"ana,,{AWS_ID},{PAIR_SECRET},https://acme.signin.aws.amazon.com/console\n",
                        (AWS_ID, PAIR_SECRET)),
    "aws-export": (f"export AWS_ACCESS_KEY_ID={AWS_ID}\nexport AWS_SECRET_ACCESS_KEY={PAIR_SECRET}\n",
                   (AWS_ID, PAIR_SECRET)),
    "boto3-keywords": (f's3 = boto3.client(\n    "s3",\n    aws_access_key_id="{AWS_ID}",\n'
                       f'    aws_secret_access_key="{PAIR_SECRET}",\n)', (AWS_ID, PAIR_SECRET)),
    "boto3-positional": (f"session = boto3.Session('{AWS_ID}', '{PAIR_SECRET}')", (AWS_ID, PAIR_SECRET)),
    "boto3-client-positional": (f"s3 = boto3.client('s3', '{AWS_ID}', '{PAIR_SECRET}')", (AWS_ID, PAIR_SECRET)),
    "boto3-positional-lines": (f"session = boto3.Session(\n    '{AWS_ID}',\n    '{PAIR_SECRET}',\n)",
                               (AWS_ID, PAIR_SECRET)),
    "aws-pair-prose": (f"key id {AWS_ID} and {PAIR_SECRET} for the export bucket", (AWS_ID, PAIR_SECRET)),
    "gcp-service-account": ('{\n  "type": "service_account",\n  "project_id": "acme-analytics",\n'
                            f'  "private_key_id": "{(gk := hexs(40))}",\n  "private_key": "{GCP_KEY}",\n'
                            '  "client_email": "etl@acme-analytics.iam.gserviceaccount.com",\n'
                            f'  "client_id": "{digits(21)}"\n}}', (gk, GCP_KEY)),
    "netrc-file": ("machine api.example.com\n  login ana\n  password marmalade\n\n"
                   "machine files.example.org login bot password " + (nk := alnum(14)) + "\n", ("marmalade", nk)),
    "pgpass-file": ("# hostname:port:database:username:password\ndb.example.com:5432:sales:ana:sunshine\n"
                    "*:*:*:postgres:" + (pk := alnum(12)) + "\n", ("sunshine", pk)),
    "dotenv": ("DB_HOST=db.internal\nDB_USER=ana\nDB_PASS=dragonfly\nOPENAI_API_KEY="
               + _SHAPES["openai-project-letters"][1] + "\n", ("dragonfly", _SHAPES["openai-project-letters"][1])),
    "twilio-env": (f"TWILIO_ACCOUNT_SID={TWILIO_SID}\nTWILIO_AUTH_TOKEN={TWILIO_PAIR}\n", (TWILIO_PAIR,)),
    "twilio-positional-lines": (f'client = Client(\n    "{TWILIO_SID}",\n    "{TWILIO_PAIR}",\n)', (TWILIO_PAIR,)),
    "my-cnf": ("[client]\nhost = db.internal\nuser = etl\npassword = marmalade\n", ("marmalade",)),
    "compose": ("services:\n  db:\n    image: postgres:16\n    environment:\n      - POSTGRES_USER=ana\n"
                "      - POSTGRES_PASSWORD=sunshine\n", ("sunshine",)),
    "kaggle-json": ('{"username":"ana","key":"' + (kk := hexs(32)) + '"}', (kk,)),
}

# Ordinary statements that must stay clean: each holds something secret-looking.
CLEAN: list[str] = [
    f"Commit {hexs(40)} fixed the timezone bug in 02_clean.ipynb.",
    f"Use git checkout {hexs(40)} -- data/schema.json to restore the old schema.",
    f"The run id is {uuid()}; compare it with the MLflow UI.",
    f"The session id {uuid()} appears in both the kernel and the server logs.",
    f"sha256 of sales_2024.parquet is {hexs(64)}, recorded in the manifest.",
    f"The md5 checksum {hexs(32)} matches the vendor's manifest.",
    f"Docker image digest sha256:{hexs(64)} is pinned in the Dockerfile.",
    f"model_checksum: {hexs(64)}",
    f"ETag {hexs(18)} is returned by S3 for each part of the upload.",
    f"The commit short hash {hexs(7)} introduced the regression.",
    f"Docker tag 2024.06.13-{hexs(7)} is the one deployed.",
    "The dataset version id is dGhpcyBpcyBhIGJhc2U2NCBpZA== in the registry.",
    "The base64 of the header row is Y3VzdG9tZXJfaWQsb3JkZXJfaWQsYW1vdW50, handy when debugging the loader.",
    "A sample ULID is 01ARZ3NDEKTSV4RRFFQ69G5FAV; rows sort on it.",
    "Use the column customer_lifetime_value_usd_2023_adjusted for the LTV chart.",
    "Column avg_order_value_last_90_days_excluding_refunds is a float, not a decimal.",
    "Notebook 07_feature_engineering_customer_segmentation_v3.ipynb builds the features.",
    "The experiment tag is exp_2024_06_13_lr3e-4_bs256_warmup500.",
    "Cohort keys look like 2023Q4_EU_new_customers_retained_90d.",
    "The BigQuery table is project-analytics-prod.sales_dw.fact_orders_daily_partitioned.",
    "Files live under /data/raw/2024/01/transactions_part_0001.parquet and are read-only.",
    "File paths like C:\\Users\\ana\\data\\sales_2024.xlsx break on Linux; use pathlib.",
    "The S3 object key is raw/2024/01/01/part-00000-6f1c2b3a.snappy.parquet for the first shard.",
    "Our bucket is s3://acme-analytics-prod-eu-west-1/curated/ and it is versioned.",
    "The GCS path gs://acme-ml-artifacts/models/xgb_2024_06_01/model.bst holds the model.",
    "Download from https://example.org/datasets/v2/sales.csv?version=3&format=csv every Monday.",
    "The API endpoint https://api.example.com/v1/forecast?horizon=28&granularity=day returns JSON.",
    "Tracking URI is http://mlflow.internal:5000 and artifacts go to s3://mlflow-artifacts/.",
    "Spark UI is at http://10.0.0.12:4040/jobs/ while the job runs.",
    "The Jupyter server runs at http://localhost:8888/lab/tree/notebooks/01_load.ipynb?reset",
    "The pip index is https://pypi.org/simple and the wheel is jupymem-0.1.0-py3-none-any.whl.",
    "The HF model id is sentence-transformers/all-MiniLM-L6-v2; load it offline.",
    "W&B run path is team-ml/churn-model/runs/2x9k4m7p for the baseline.",
    "The cache key is customer_id plus order_date, hashed with md5.",
    "The primary key is order_id; the sort key is event_ts_utc.",
    "The dedup key is (customer_id, order_id, line_no).",
    "The partition key dt=2024-01-01 must be a string, not a date.",
    "The feature store entity key is user_id_v2_20240101.",
    "Keys are customer_id and store_id_2024 in the fact table.",
    "The token count is 4096 for the long-context model.",
    "Token IDs 50256 and 50257 are the end-of-text markers in the GPT-2 vocabulary.",
    "The token budget is 8k per request, so summarise long notebooks first.",
    "We rotate the token every 24 hours; the job fetches a new one at start.",
    "The secret to fast joins is to sort both frames by customer_id first.",
    "The password field in the users table is hashed with bcrypt.",
    "The API key rotation is handled by the platform team every quarter.",
    "The access key for bucket is not needed: it allows anonymous reads.",
    "The public key fingerprint SHA256:nThbg6kXUpJWGl7E1IGOCspRomTxdCARLviKw6E5SY8 identifies the deploy server.",
    "Use hash_id = md5(customer_email) to pseudonymize before sharing.",
    "hash = 5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8 is the expected digest of the fixture.",
    "The MLflow experiment 1234567890123456 holds the baseline runs.",
    "The GitHub Actions run 9876543210 failed at the lint step, not in the tests.",
    "Customer 4111111111111111 is the card number the payment sandbox documents for tests.",
    "SKU SK1234 and SKU SK5678 were discontinued in March.",
    "Padding of AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA in the raw column means the value is missing.",
    "The pattern token_[0-9a-f]{32} is what the tokenizer produces for hashed vocabulary entries.",
    "Use the column sk_customer as the surrogate key; the sk_ prefix means surrogate key in the warehouse.",
    "Databricks workspace adb-1234567890123456.7.azuredatabricks.net hosts the nightly jobs.",
    "The Snowflake account locator is xy12345.eu-central-1 for the analytics account.",
    "IBAN-like ids such as ES9121000418450200051332 are synthetic in the test data.",
    "The ISBN-13 9780262035613 identifies the textbook the course follows.",
    "Parquet row group size is 134217728 bytes by default.",
    "OAuth is handled by the gateway; notebooks never see tokens.",
    "The key insight is that returns spike after holidays.",
    f"Cluster {lower(8)}-{digits(6)}-{lower(5)} runs the feature pipeline.",
    f"The trace id {hexs(32)} links the request to the model call.",
    f"Object versions like {alnum(32)} are assigned by S3; do not hard-code them.",
    "Model registry alias churn_xgb@champion points at version 17.",
    "The ARN arn:aws:s3:::acme-analytics-prod/curated/* is what the role may read.",
    "en-us and es-es are the locales of the survey, stored in locale_code.",
]
