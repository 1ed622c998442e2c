"""Statements that look like the generic layer's secrets and hold none: each must stay clean.

The generic layer reads credentials by their name and syntax (``secret_generic``); these
are the same names and syntaxes around what is not a secret: placeholders and variables,
identifiers that name a secret without holding one (``password_hash``, ``api_key_id``,
``sort_key``), public keys and certificates in base64, webhook and query URLs without a
token, command lines that prompt for their password, and ports (``docker -p 8888:8888``); then
the same around the command lines, SQL, protocol lines, calls, headers and cookies of
``secret_corpus_classes``: ports, pids, paths and profiles after ``-p``, configuration commands
that set no secret, code that reads or hashes a credential, tracking cookies, queues' routing keys.
Values are built at run time as in ``secret_shapes``.
"""

from __future__ import annotations

import base64
import random

_rng = random.Random(4242)


def _hex(n: int) -> str:
    return "".join(_rng.choice("0123456789abcdef") for _ in range(n))


def _bytes(n: int) -> bytes:
    return bytes(_rng.randrange(256) for _ in range(n))


# A certificate's DER and a public key's (SubjectPublicKeyInfo): base64 that is no private key.
_CERT = base64.b64encode(bytes.fromhex("3082035d30820245a003020102020900") + _bytes(600)).decode()
_SPKI = base64.b64encode(bytes.fromhex("30820122300d06092a864886f70d01010105000382010f003082010a0282010100")
                         + _bytes(260)).decode()
_B64_CERT_PEM = base64.b64encode(b"-----BEGIN CERTIFICATE-----\n" + base64.b64encode(_bytes(300))
                                 + b"\n-----END CERTIFICATE-----\n").decode()
_B64_JSON = base64.b64encode(b'{\n  "name": "etl",\n  "version": 3,\n  "tables": ["orders", "customers", "returns"]\n}')

LOOKALIKES: list[str] = [
    # placeholders and variables
    'password = os.environ["WAREHOUSE_PASSWORD"]',
    "password = getpass.getpass('Warehouse password: ')",
    "DB_PASSWORD_PROD=${DB_PASSWORD_PROD}",
    "redis_password_prod: '{{ vault_redis_password }}'",
    "secret_key_base: <%= ENV['SECRET_KEY_BASE'] %>",
    "<password>${env.NEXUS_PASSWORD}</password>",
    "<password></password>",
    '<add key="WarehousePassword" value="#{WarehousePassword}#" />',
    "Driver={ODBC Driver 18 for SQL Server};Server=db;Uid=etl;PWD={your_password};",
    "sqlcmd -S db.acme.net -U sa -P $SQLCMDPASSWORD -Q 'SELECT 1'",
    "az login --service-principal -u $APP_ID -p $CLIENT_SECRET --tenant $TENANT_ID",
    "ldapsearch -x -W -D 'cn=admin,dc=acme,dc=org' -b dc=acme,dc=org",
    "openssl pkcs12 -in client.p12 -nodes -passin env:P12_PASSWORD",
    "openssl enc -aes-256-cbc -in a.csv -out a.enc -pass file:./key.txt",
    "keytool -list -keystore app.jks -storepass:env STOREPASS",
    "keytool -list -v -keystore $JAVA_HOME/lib/security/cacerts -storepass changeit",
    "smbclient -L //files.acme.org -U ana",
    "htpasswd -c /etc/nginx/.htpasswd ana",
    "ssh-keygen -t ed25519 -N '' -f ~/.ssh/ci",
    'ssh-keygen -t ed25519 -N "$PASSPHRASE" -f ~/.ssh/deploy',
    "r = requests.get(url, auth=(user, password))",
    "r = requests.get(url, auth=('user', 'pass'))",
    "server.login(user, os.environ['SMTP_PASSWORD'])",
    'spark.conf.set("fs.azure.account.key.acmelake.dfs.core.windows.net", dbutils.secrets.get("kv", "lake-key"))',
    'spark.conf.set("fs.azure.account.auth.type.acmelake.dfs.core.windows.net", "OAuth")',
    'spark.conf.set("spark.sql.shuffle.partitions", "200")',
    "//npm.acme.io/repository/npm/:_authToken=${NPM_TOKEN}",
    "export GITHUB_TOKEN=$(gh auth token)",
    "mongosh -u admin -p --authenticationDatabase admin",
    "mysql -h db -P 3306 -u etl -p sales",
    "sqlplus / as sysdba",
    "sqlplus -S $ORA_USER/$ORA_PASS@ORCL @report.sql",
    "nmcli dev wifi connect AcmeGuest password \"$WIFI_PASSWORD\"",
    "7z a -p archive.7z data/  # 7z asks for the password",
    "Use unzip -P only for throwaway archives; zip encryption is weak.",
    # identifiers that name a secret
    "password_hash: $2b$12$" + "Kx8" + _hex(50),
    "api_key_id: ak-2024-06-13-analytics",
    "token_count: 4096",
    "max_tokens=512, temperature=0.2",
    "key_column = 'customer_id'",
    "sort_key: event_ts_utc",
    "partition_key = 'dt'",
    "primary_key=order_id",
    "idempotency_key = '" + _hex(32) + "'",
    "next_page_token = 'CiAKGjBpNDd2Nmp2Zml2cXRsYmN2dHZsbg'",
    "pad_token = '<|endoftext|>'",
    "secret_name: prod/warehouse",
    "secretKeyRef:\n  name: warehouse\n  key: password",
    "auth_type: oauth",
    "auth: none",
    "credentials_file = '/etc/gcp/sa.json'",
    "GOOGLE_APPLICATION_CREDENTIALS=/secrets/sa.json",
    "ssl_keyfile = 'server.key'",
    "PASSWORD_MIN_LENGTH=12",
    "first_pass: done",
    "second_pass = 'dedupe_v2'",
    "pass_rate: 0.97",
    "bypass_cache: true",
    "TOKENIZERS_PARALLELISM=false",
    "HF_TOKEN_PATH=~/.cache/huggingface/token",
    "sas_token_expiry: 2024-12-31",
    "<passwordEncoder>bcrypt</passwordEncoder>",
    "<secretRef>warehouse-secret</secretRef>",
    "<key>NSCameraUsageDescription</key><string>Scan receipts</string>",
    '<add key="ApiKeyHeaderName" value="X-Api-Key" />',
    '<entry key="db.url">jdbc:postgresql://db/sales</entry>',
    'labels = {"api_key": "API key", "token": "Token"}',
    'df = df.rename(columns={"pwd": "password_plain"})',
    'st.text_input("Password", type="password")',
    'assemblyIdentity publicKeyToken="' + _hex(16) + '"',
    "public_key: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI" + _hex(40) + " ana@laptop",
    # public keys, certificates, ordinary base64
    "certificate-authority-data: " + _B64_CERT_PEM,
    "The server certificate is " + _CERT[:120],
    "Pin this public key: " + _SPKI[:200],
    '{"kty": "RSA", "use": "sig", "kid": "2024-06", "n": "' + _hex(120) + '", "e": "AQAB"}',
    "The manifest in base64 is " + _B64_JSON.decode(),
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
    # URLs without a token
    "https://github.com/acme/etl/settings/hooks/412345678",
    "https://developers.mattermost.com/integrate/webhooks/incoming/",
    "https://api.acme.io/webhooks/{webhook_id}/deliveries",
    "https://hooks.zapier.com/hooks/catch/",
    "https://acme.azurewebsites.net/api/refresh?code=<your-function-key>",
    "https://management.azure.com/subscriptions?api-version=2016-06-01",
    "https://accounts.google.com/o/oauth2/v2/auth?client_id=etl&response_type=code&scope=email",
    "https://example.com/reset?token=expired",
    "https://client.example.com/cb?code=SplxlOBeZQQYbYS6WxSbIA&state=xyz",
    # ports and digests
    "docker run -p 8888:8888 jupyter/scipy-notebook",
    "ssh -p 2222 ana@gpu-box",
    "psql -h db -p 5432 -U etl sales",
    f"Commit {_hex(40)} rotated nothing; the keys live in the vault.",
    "Rotate secret_key_base with `rails credentials:edit`; never paste it here.",
    # -- the classes of the first holdout's misses (secret_corpus_classes), around no secret:
    # SQL that sets no password, and prose that says "identified by"
    "ALTER USER etl WITH PASSWORD NULL;",
    "ALTER ROLE analyst VALID UNTIL 'infinity';",
    "CREATE USER ana IDENTIFIED EXTERNALLY;",
    "SELECT user, host FROM mysql.user WHERE password_expired = 'Y';",
    "UPDATE accounts SET password_hash = crypt(:pw, gen_salt('bf')) WHERE id = :id;",
    "Duplicates were identified by customer_id and order date, then dropped.",
    "Outliers identified by IQR were clipped before the regression.",
    "GRANT SELECT ON sales.orders TO analyst;",
    "ALTER USER etl PASSWORD EXPIRE;",
    # command lines whose -p is a port, a pid, a path, a profile, a prompt
    "docker run --rm -u 1000:1000 -p 8888:8888 jupyter/scipy-notebook",
    "python -u train.py -p configs/base.yaml",
    "python -u train.py -p exp42",
    "sudo -u postgres psql -p 5433 -d sales",
    "mysql -u etl -p sales_db",
    "mysql -u etl -p db01",
    "kubectl logs -n prod -p api-7f9c8d6b5-x2k4q",
    "cp -u -p src/ dst/",
    "rsync -u -P data/ backup/",
    "top -u ana -p 4242",
    "pscp -P 2222 report.csv etl@files:/in/",
    "psexec \\\\etl-box -u ACME\\admin -p cmd /c dir",
    "cqlsh -u cassandra db.acme.io 9042",
    "mosquitto_sub -h broker -p 1883 -t lab/#",
    "ipmitool -I lanplus -H 10.0.0.5 -U admin -E chassis status",
    "snmpwalk -v2c -c public switch01",
    "net user ana /domain",
    "rabbitmqctl list_users",
    "htpasswd -c /etc/nginx/.htpasswd ana",
    "xfreerdp /u:ana /v:win-box.acme.org /size:1920x1080",
    "msbuild app.sln /p:Configuration=Release /p:Platform=x64",
    "git checkout -b feature/cookie-banner",
    "vault login -method=oidc role=analyst",
    "openssl enc -d -aes-256-cbc -in a.enc -out a.csv -pass env:ENC_PASS",
    # configuration commands that set no secret
    "git config --global user.signingkey 3AA5C34371567BD2",
    "git config --global credential.helper store",
    "git config --global user.email ana@acme.io",
    "npm config set registry https://npm.acme.io/",
    "aws configure set region eu-west-1 --profile etl",
    "dvc remote modify lake ask_password true",
    "redis-cli CONFIG GET requirepass",
    "poetry config virtualenvs.in-project true",
    "nmcli dev wifi connect AcmeGuest --ask",
    # protocol lines and test output
    "AUTH LOGIN",
    "PASS src/components/App.test.js (2.31 s)",
    "PASS: test_ingest_dedup",
    "auth required",
    # PowerShell and code that reads or hashes a credential
    "$sec = ConvertTo-SecureString $plain -AsPlainText -Force",
    "$pw = Read-Host -AsSecureString",
    'pw = keyring.get_password("warehouse", "etl")',
    "ok = user.check_password(raw_password)",
    'creds = Credentials.from_service_account_file("sa.json")',
    'cred = AzureKeyCredential(os.environ["SEARCH_KEY"])',
    'ids = tokenizer.convert_tokens_to_ids("hello")',
    'value = get_secret("prod/warehouse")',
    'h = make_password_hash("column_name")',
    # names and values separated by blanks that are no secret
    "storePassword System.getenv('STORE_PASSWORD')",
    "keyPassword keystoreProperties['keyPassword']",
    'auth_basic "Restricted area";',
    "setenv PATH /usr/local/bin",
    "ENV PYTHONDONTWRITEBYTECODE 1",
    "PasswordAuthentication no",
    "Password Policies",
    "    Token string `json:\"token\"`",
    "password VARCHAR(255) NOT NULL,",
    "requirepass \"\"",
    "rootpw --iscrypted $6$rounds=4096$abc$XyZ",
    # headers and cookies without a credential
    "Authorization: Bearer ${TOKEN}",
    "Authorization: GenieKey $OPSGENIE_API_KEY",
    "Authorization header missing for /v2/alerts",
    'requests.get(url, cookies={"theme": "dark", "lang": "en"})',
    "Cookie: _ga=GA1.2.1234567890.1700000000; _gid=GA1.2.987654321.1700000000",
    "Set-Cookie: sessionid=; expires=Thu, 01 Jan 1970 00:00:00 GMT; Path=/",
    "The session cookie is set with SameSite=Lax.",
    # keys of queues and tables, a pre-shared key's placeholder, dotted names
    'channel.basic_publish(exchange="events", routing_key="orders.created.eu", body=msg)',
    "integration_key: ${PAGERDUTY_KEY}",
    "psk=${WIFI_PSK}",
    "VAULT_ADDR=https://vault.acme.io:8200",
    "token = settings.vault.token",
]
