"""A second holdout: credentials as they appear in data work, written after the rules froze again.

The rules were improved on the first holdout's misses and frozen in acf6d47; this corpus was
written afterwards, committed before it was measured, and is not tuned on: its figure is
what the rules do on formats nobody showed them. Neither the vendor table nor the earlier
corpora (``secret_corpus_generic``, ``secret_corpus_holdout``, ``secret_corpus_classes``) name
these formats: the files, command lines, notebooks and libraries they come from (experiment
trackers, orchestrators, database clients and drivers in several languages, message queues,
network gear, mail clients, shell history, CI, cloud CLIs). Some share a syntax with what the
rules know (an INI line, a JSON member); how the syntax travels to new tools is part of what
is measured.

``HOLDOUT2`` maps a name to ``(text, secrets)``; values are built at run time from a seeded
generator, or invented (the passwords below); all are fake. ``LOOKALIKES2`` holds ordinary
lines of the same tools that hold no secret: hashes, ids, digests, placeholders, references
to a secret store, parameter names and prose.
"""

from __future__ import annotations

import base64
import random
import string

_rng = random.Random(20261207)
_ALNUM = string.ascii_letters + string.digits


def _draw(alphabet: str, n: int) -> str:
    while True:
        out = "".join(_rng.choices(alphabet, k=n))
        if not set(alphabet) & set(string.digits) or (any(c.isdigit() for c in out) and any(c.isalpha() for c in out)):
            return out


def alnum(n: int) -> str:
    return _draw(_ALNUM, n)


def hexs(n: int) -> str:
    return _draw("0123456789abcdef", n)


def b64(n: int) -> str:
    return _draw(_ALNUM + "+/", n)


def upper32(n: int) -> str:
    return _draw(string.ascii_uppercase + "234567", n)


def lower(n: int) -> str:
    return _draw(string.ascii_lowercase, n)


def uuid() -> str:
    return f"{hexs(8)}-{hexs(4)}-4{hexs(3)}-8{hexs(3)}-{hexs(12)}"


# Invented passwords, as people choose them: symbols and digits, words and digits, a passphrase.
PW = "Harb0r!Crane"
PW2 = "Tundra2019x"
PW3 = "m4ple-Syrup-77"
PW4 = "winterfell42"

HOLDOUT2: dict[str, tuple[str, tuple[str, ...]]] = {}


def _add(name: str, text: str, *secrets: str) -> None:
    assert name not in HOLDOUT2 and all(s in text for s in secrets), name
    HOLDOUT2[name] = (text, secrets)


# -- experiment trackers, orchestrators, ML services (notebook cells and their configs)
_add("wandb-local-key", "wandb login --relogin --host https://wandb.acme.io local-" + (k := hexs(40)), k)
_add("comet-config", "[comet]\napi_key = " + (k := alnum(25)) + "\nworkspace = acme-ds\nproject_name = churn", k)
_add("clearml-hocon", 'api {\n  credentials {\n    "access_key" = "' + upper32(20) + '"\n    "secret_key" = "'
     + (k := alnum(50)) + '"\n  }\n}', k)
_add("ipython-env-magic", "%env KAGGLE_KEY=" + (k := hexs(32)), k)
_add("roboflow-client", 'rf = Roboflow(api_key="' + (k := alnum(20)) + '")', k)
_add("weaviate-auth", 'client = weaviate.connect_to_wcs(cluster_url=url, auth_credentials=AuthApiKey("'
     + (k := alnum(40)) + '"))', k)
_add("cohere-positional", 'co = cohere.Client("' + (k := alnum(40)) + '")', k)
_add("prefect-secret-block", 'Secret(value="' + (k := alnum(32)) + '").save("warehouse-token")', k)
_add("airflow-variables-set", "airflow variables set partner_api_secret " + (k := alnum(32)), k)
_add("airflow-conn-password", f"airflow connections add wh --conn-type postgres --conn-login etl --conn-password '{PW}' "
     "--conn-host db.acme.io", PW)
_add("dbt-profile-pass", f"sales:\n  outputs:\n    dev:\n      type: postgres\n      user: etl\n      pass: {PW3}\n", PW3)
_add("jupyter-server-list", "Currently running servers:\nhttp://localhost:8888/?token=" + (k := hexs(48))
     + " :: /home/ana/work", k)
_add("jupyterhub-cookie-secret", "c.JupyterHub.cookie_secret = bytes.fromhex('" + (k := hexs(64)) + "')", k)
_add("segment-write-key", "analytics.write_key = '" + (k := alnum(32)) + "'", k)
_add("google-ads-yaml", "developer_token: " + (k := alnum(22)) + "\nuse_proto_plus: True\nlogin_customer_id: 1234567890", k)
_add("twitter-bearer", 'bearer_token = "' + (k := "A" * 22 + alnum(20) + "%3D" + alnum(50)) + '"', k)
# -- databases: clients, service files, drivers in several languages
_add("snowsql-config", f"[connections.etl]\naccountname = acme-xy12345\nusername = etl\npassword = {PW}\n", PW)
_add("pg-service-conf", f"[warehouse]\nhost=db.acme.io\nport=5432\ndbname=sales\nuser=etl\npassword={PW2}\n", PW2)
_add("invoke-sqlcmd", f"Invoke-Sqlcmd -ServerInstance db01 -Database sales -Username etl -Password '{PW}' -Query 'SELECT 1'", PW)
_add("mongo-create-user", f'db.createUser({{user: "etl", pwd: "{PW}", roles: ["readWrite"]}})', PW)
_add("mkstore-credential", f"mkstore -wrl /u01/wallet -createCredential ORCL etl {PW2}", PW2)
_add("neo4j-initial-password", f"neo4j-admin dbms set-initial-password {PW2}", PW2)
_add("consul-kv-put", f"consul kv put config/warehouse/password {PW2}", PW2)
_add("zookeeper-addauth", f"addauth digest etl:{PW2}", PW2)
_add("paramiko-positional", f'client.connect("gw.acme.io", 22, "etl", "{PW}")', PW)
_add("ftplib-positional", f'ftp = ftplib.FTP("files.acme.org", "etl", "{PW}")', PW)
_add("pymssql-positional", f'conn = pymssql.connect("db01", "etl", "{PW}", "sales")', PW)
_add("cx-oracle-positional", f'conn = cx_Oracle.connect("etl", "{PW}", "db:1521/ORCL")', PW)
_add("smb-connection", f'conn = SMBConnection("etl", "{PW}", "laptop", "nas01", use_ntlm_v2=True)', PW)
_add("minio-positional", 'mc = Minio("minio.acme.io:9000", "etl-reader", "' + (k := alnum(40)) + '", secure=True)', k)
_add("php-mysqli", f'$db = mysqli_connect("db", "etl", "{PW}", "sales");', PW)
_add("perl-dbi", f'my $dbh = DBI->connect("dbi:Pg:dbname=sales;host=db", "etl", "{PW}");', PW)
_add("go-mysql-dsn", f'db, err := sql.Open("mysql", "etl:{PW2}@tcp(db:3306)/sales")', PW2)
_add("java-getconnection", f'Connection c = DriverManager.getConnection(url, "etl", "{PW}");', PW)
_add("rust-builder", f'let opts = PgConnectOptions::new().host("db").username("etl").password("{PW}");', PW)
_add("matlab-database", f"conn = database('sales','etl','{PW}');", PW)
_add("r-keyring", f'keyring::key_set_with_value("warehouse", "etl", "{PW}")', PW)
_add("r-sys-setenv", f'Sys.setenv(DB_PASS = "{PW}")', PW)
_add("hadoop-core-site", "<property>\n  <name>fs.azure.account.key.acmelake.blob.core.windows.net</name>\n  <value>"
     + (k := b64(86) + "==") + "</value>\n</property>", k)
_add("zeppelin-shiro", f"[users]\nadmin = {PW}, admin\nanalyst = {PW3}, reader", PW, PW3)
_add("tomcat-users", f'<user username="admin" password="{PW}" roles="manager-gui"/>', PW)
# -- message queues and brokers
_add("kafka-jaas", "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required "
     f'username="etl" password="{PW}";', PW)
_add("kcat-sasl", f"kcat -b broker:9093 -X security.protocol=SASL_SSL -X sasl.mechanisms=PLAIN -X sasl.username=etl "
     f"-X sasl.password={PW2} -L", PW2)
_add("rabbitmq-conf", f"default_user = etl\ndefault_pass = {PW2}\nlisteners.tcp.default = 5672", PW2)
_add("mosquitto-bridge", f"connection bridge-cloud\naddress mqtt.acme.io:8883\nremote_username etl\nremote_password {PW2}", PW2)
_add("nats-nkey-seed", "-----BEGIN USER NKEY SEED-----\n" + (k := "SUA" + upper32(55)) + "\n------END USER NKEY SEED------", k)
# -- shell history, CI, cloud CLIs
_add("sudo-stdin", f"echo '{PW}' | sudo -S apt-get update", PW)
_add("chpasswd", f"echo 'etl:{PW}' | sudo chpasswd", PW)
_add("docker-secret-create", f"printf '{PW}' | docker secret create wh_password -", PW)
_add("basic-auth-by-hand", f"echo -n 'etl:{PW}' | base64", PW)
_add("openssl-passwd", f"openssl passwd -6 '{PW}'", PW)
_add("setx", f'setx WAREHOUSE_PASSWORD "{PW}"', PW)
_add("expect-send", f'spawn ssh etl@gw.acme.io\nexpect "password:"\nsend "{PW}\\r"\ninteract', PW)
_add("jenkins-cli-auth", "java -jar jenkins-cli.jar -s https://ci.acme.io/ -auth etl:11" + (k := hexs(32)) + " build nightly", k)
_add("gitlab-trigger-form", "curl -X POST --fail -F token=" + (k := hexs(30)) + " -F ref=main "
     "https://gitlab.acme.io/api/v4/projects/42/trigger/pipeline", k)
_add("bundler-credentials", "bundle config set --global gems.acme.io etl:" + (k := alnum(32)), k)
_add("sbt-credentials", f'credentials += Credentials("Acme Nexus", "nexus.acme.io", "etl", "{PW}")', PW)
_add("b2-authorize", "b2 authorize-account 0025a1b2c3d4e5f0000000003 K002" + (k := alnum(27)), k)
_add("gsutil-hmac-output", "Access ID:   GOOG1E" + upper32(55) + "\nSecret:      " + (k := b64(40)), k)
_add("kubectl-docker-registry", "kubectl create secret docker-registry regcred --docker-server=registry.acme.io "
     f"--docker-username=ci --docker-password='{PW}'", PW)
_add("ansible-inventory", f"db01 ansible_host=10.0.0.5 ansible_user=etl ansible_password={PW2}", PW2)
_add("compose-healthcheck", f'    test: ["CMD", "mysqladmin", "ping", "-h", "localhost", "-uroot", "-p{PW2}"]', PW2)
_add("meilisearch-master-key", "./meilisearch --env production --master-key " + (k := alnum(32)), k)
_add("solr-auth", f"bin/solr auth enable -type basicAuth -credentials etl:{PW2} -blockUnknown true", PW2)
_add("java-keystore-prop", f"java -Djavax.net.ssl.keyStore=/etc/etl.jks -Djavax.net.ssl.keyStorePassword={PW2} -jar etl.jar", PW2)
_add("mount-cifs", f"sudo mount -t cifs //nas/data /mnt/data -o username=etl,password={PW2},vers=3.0", PW2)
_add("curl-json-login", f'curl -s -X POST -d \'{{"username":"etl","password":"{PW}"}}\' https://api.acme.io/login', PW)
_add("hasura-admin-secret", "curl -H 'x-hasura-admin-secret: " + (k := alnum(32)) + "' https://gql.acme.io/v1/graphql", k)
# -- app code and configs
_add("jwt-encode-literal", f'token = jwt.encode(payload, "{PW3}-signing", algorithm="HS256")', f"{PW3}-signing")
_add("flask-config-subscript", 'app.config["SECRET_KEY"] = "' + (k := hexs(32)) + '"', k)
_add("es-api-key-tuple", 'es = Elasticsearch(hosts, api_key=("' + alnum(20) + '", "' + (k := alnum(22)) + '"))', k)
_add("es-basic-auth-tuple", f'es = Elasticsearch(hosts, basic_auth=("elastic", "{PW}"))', PW)
_add("cargo-credentials", '[registry]\ntoken = "cio' + (k := alnum(32)) + '"', k)
# -- mail clients
_add("msmtprc-app-password", "account gmail\nhost smtp.gmail.com\nport 587\nuser ana@acme.io\npassword "
     + (k := " ".join(lower(4) for _ in range(4))), k)
_add("fetchmailrc", f'poll imap.acme.io protocol IMAP user "etl" password "{PW}"', PW)
_add("offlineimaprc", f"[Repository Remote]\ntype = IMAP\nremoteuser = etl\nremotepass = {PW2}", PW2)
# -- network gear, VPNs, directories
_add("cisco-username", f"username admin privilege 15 password 0 {PW}", PW)
_add("snmpd-community", "rocommunity n0c-R3ad0nly 10.0.0.0/8", "n0c-R3ad0nly")
_add("ipsec-secrets", f'10.0.0.1 10.0.0.2 : PSK "{PW3}"', PW3)
_add("wireguard-private", "[Interface]\nAddress = 10.8.0.2/24\nPrivateKey = " + (k := b64(43) + "="), k)
_add("openvpn-static-key", "-----BEGIN OpenVPN Static key V1-----\n" + (k := "\n".join(hexs(32) for _ in range(16)))
     + "\n-----END OpenVPN Static key V1-----", k)
_add("ldif-password-b64", "dn: uid=etl,ou=people,dc=acme,dc=io\nuserPassword:: " + (k := base64.b64encode(PW.encode()).decode()), k)
_add("reg-proxy-password", f'[HKEY_CURRENT_USER\\Software\\SimonTatham\\PuTTY\\Sessions\\gw]\n"ProxyPassword"="{PW}"', PW)


# -- ordinary lines of the same tools, around no secret ---------------------------------------
_SHA = hexs(64)
LOOKALIKES2: list[str] = [
    # digests, hashes, ids and fingerprints
    f"{_SHA}  data/raw/orders_2024.csv",
    "docker pull acme/etl@sha256:" + hexs(64),
    "acme/etl    latest    3f1c9a2b7d4e    2 days ago    512MB",
    "a1b2c3d fix: drop duplicate orders before the join",
    'mlflow.start_run(run_id="' + hexs(32) + '")',
    'wandb.Api().run("acme/churn/3kd92jxa")',
    'model = AutoModel.from_pretrained("acme/churn-bert", revision="' + hexs(40) + '")',
    "kms_key_id: arn:aws:kms:eu-west-1:123456789012:key/" + uuid(),
    "Fingerprint: SHA256:" + b64(43) + " ana@laptop (ED25519)",
    "pub   rsa4096 2023-01-01 [SC]\n      " + hexs(40).upper(),
    "x-request-id: " + uuid(),
    'ETag: "' + hexs(40) + '"',
    "md5: " + hexs(32) + "\n  size: 20481\n  path: data/orders.parquet",
    "VersionId: 3/L4kqtJlcpXroDTDmJ+rmSpXd3dIbrHY+MTRCxf3vjVBH40Nr8X8gdRQBpUMLUo",
    "etl:$apr1$r31.....$HqJZimcKQFAMYayBlzkrA/",
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI" + b64(43) + " ana@laptop",
    # references to a secret store, and commands that read a secret without holding one
    "kubectl get secret warehouse -o jsonpath='{.data.password}' | base64 -d",
    "aws secretsmanager get-secret-value --secret-id prod/warehouse --query SecretString --output text",
    "gcloud secrets versions access latest --secret=warehouse-password",
    "az keyvault secret show --vault-name kv-acme --name db-password --query value -o tsv",
    "vault kv get -field=password secret/warehouse",
    'op read "op://Private/Warehouse/password"',
    "aws ecr get-login-password --region eu-west-1 | docker login --username AWS --password-stdin "
    "123456789012.dkr.ecr.eu-west-1.amazonaws.com",
    "redis-cli -h cache --askpass",
    "mysql --login-path=warehouse sales",
    'psql "service=warehouse" -c "select 1"',
    "secret_scope: kv-prod",
    "api_key_env: OPENAI_API_KEY",
    "--api-key-file ~/.config/acme/key",
    # names, schemas and parameters
    '"token_type": "Bearer", "expires_in": 3599, "scope": "read"',
    'PASSWORD_HASHERS = ["django.contrib.auth.hashers.Argon2PasswordHasher"]',
    "CREATE TABLE users (id bigint, password_hash text, api_key_id uuid, token_expires_at timestamptz);",
    "GRANT USAGE ON SCHEMA analytics TO reporter;",
    "ALTER USER reporter SET search_path = analytics;",
    "def connect(host: str, user: str, password: str | None = None) -> Connection:",
    'parser.add_argument("--password", help="database password (prompted if omitted)")',
    '@click.option("--token", envvar="ACME_TOKEN", hide_input=True)',
    '{"unk_token": "[UNK]", "pad_token": "[PAD]", "bos_token": "<s>", "eos_token": "</s>"}',
    "max_new_tokens=256, top_k=50, temperature=0.7",
    "security.protocol=SASL_SSL\nsasl.mechanism=SCRAM-SHA-512",
    "pass_through: true\npasses: 3",
    # placeholders
    "wandb login <your-api-key>",
    "export COMET_API_KEY=xxxxxxxxxxxxxxxxxxxx",
    'NEPTUNE_API_TOKEN="YOUR_API_TOKEN"',
    '{"username":"yourname","key":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}',
    "curl -H 'Authorization: Bearer <token>' https://api.acme.io/v1/runs",
    # prose
    "Rotate the Kafka SASL password every 90 days and keep it in Vault.",
    "The token endpoint returns an access token that expires after one hour.",
    "Set PGPASSWORD only in CI; locally, use ~/.pgpass.",
    "Pass the API key in the X-Api-Key header, never in the query string.",
    "The pass@k metric with k=10 was 0.62 on the held-out split.",
    "password (str): the password of the SMTP account, read from the keyring.",
]
