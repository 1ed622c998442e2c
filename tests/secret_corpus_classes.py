"""The classes behind the first holdout's misses, widened: what the rules were improved on.

``secret_corpus_holdout`` named 19 misses (SQL's ``IDENTIFIED BY``, positional passwords of
clients the rules did not list, ``ConvertTo-SecureString``, redis ``AUTH``, Groovy's
``storePassword 'x'``, ``psk=``, a PagerDuty routing key, an Opsgenie header, cookies, a legacy
Vault token, rclone's ``pass =``, a legacy Teams webhook). Each is one case of a class; this
corpus holds several of each class, written with the rules, so that a rule reads the class
and not the one line. It is a development corpus, not a measure: its figure says nothing
about formats nobody wrote down (``secret_corpus_holdout2`` does, written after the rules froze).

Same structure as the other corpora: ``CLASSES`` maps a name to ``(text, secrets)``; values
are built at run time from a seeded generator and are fake.
"""

from __future__ import annotations

import base64
import random
import string

_rng = random.Random(20261206)
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


def uuid() -> str:
    return f"{hexs(8)}-{hexs(4)}-4{hexs(3)}-b{hexs(3)}-{hexs(12)}"


PW = "Qu4rtz#Lake"
PW2 = "Qu4rtzLake7"
PW3 = "Riv3rStone8"

CLASSES: dict[str, tuple[str, tuple[str, ...]]] = {}


def _add(name: str, text: str, *secrets: str) -> None:
    assert name not in CLASSES and all(s in text for s in secrets), name
    CLASSES[name] = (text, secrets)


# -- SQL: the statements that set a password
_add("sql-create-role", f"CREATE ROLE analyst LOGIN PASSWORD '{PW}' VALID UNTIL '2027-01-01';", PW)
_add("sql-alter-login", f"ALTER LOGIN etl_svc WITH PASSWORD = N'{PW}';", PW)
_add("sql-set-password", f"SET PASSWORD FOR 'etl'@'%' = '{PW}';", PW)
_add("sql-user-mapping", f"CREATE USER MAPPING FOR etl SERVER wh OPTIONS (user 'etl', password '{PW}');", PW)
_add("sql-db-link", f"CREATE DATABASE LINK sales CONNECT TO etl IDENTIFIED BY {PW2} USING 'SALES';", PW2)
_add("sql-mysql-plugin", f"CREATE USER 'ana'@'%' IDENTIFIED WITH mysql_native_password BY '{PW}';", PW)
_add("sql-scoped-credential", f"CREATE DATABASE SCOPED CREDENTIAL lake WITH IDENTITY = 'etl', SECRET = '{PW}';", PW)
_add("sql-oracle-bare", f"ALTER USER scott IDENTIFIED BY {PW2} ACCOUNT UNLOCK;", PW2)
# -- clients the rules did not list: each by how it takes a password
_add("cqlsh", f"cqlsh -u cassandra -p {PW2} db.acme.io 9042", PW2)
_add("beeline", f"beeline -u jdbc:hive2://hive:10000/sales -n etl -p '{PW}'", PW)
_add("mosquitto-pub", f"mosquitto_pub -h broker -u sensor -P {PW2} -t lab/temp -m 21.5", PW2)
_add("ipmitool", f"ipmitool -I lanplus -H 10.0.0.5 -U admin -P {PW2} chassis status", PW2)
_add("snmpwalk-v3", f"snmpwalk -v3 -l authPriv -u mon -a SHA -A {PW2} -x AES -X {PW3} switch01", PW2, PW3)
_add("pscp", f"pscp -pw {PW2} report.csv etl@files:/in/", PW2)
_add("plink", f"plink -ssh etl@gw -pw '{PW}' uptime", PW)
_add("cmdkey", f"cmdkey /add:fileserver /user:ACME\\etl /pass:{PW2}", PW2)
_add("net-user", f"net user etl_svc {PW2} /add", PW2)
_add("schtasks", f"schtasks /Create /S srv /U ACME\\etl /P {PW2} /TN nightly /TR etl.bat", PW2)
_add("rabbitmqctl", f"rabbitmqctl add_user etl {PW2}", PW2)
_add("mc-admin", f"mc admin user add local analyst {PW2}", PW2)
_add("mysqladmin", f"mysqladmin -u root password {PW2}", PW2)
_add("db2-connect", f"db2 connect to SAMPLE user db2inst1 using {PW2}", PW2)
_add("isql", f"isql -v WarehouseDSN etl {PW2}", PW2)
_add("rdesktop", f"rdesktop -u ana -p {PW2} win-box.acme.org", PW2)
_add("wmic", f"wmic /node:srv01 /user:admin /password:{PW2} os get caption", PW2)
_add("skopeo", f"skopeo copy --src-creds etl:{PW2} docker://a.io/x docker://b.io/x", PW2)
_add("helm-registry", f"helm registry login registry.acme.io -u ci -p {PW2}", PW2)
_add("gh-secret", f"gh secret set WAREHOUSE_PASSWORD --body '{PW}'", PW)
_add("openssl-k", f"openssl enc -aes-256-cbc -k {PW2} -in a.csv -out a.enc", PW2)
_add("kickstart-rootpw", f"rootpw --plaintext {PW2}", PW2)
_add("subprocess-list", f'subprocess.run(["psexec", r"\\\\srv", "-u", "etl", "-p", "{PW}", "cmd"])', PW)
# -- clients nobody listed: a password option after a user option
_add("unknown-client-dash", f"vpncli connect -u ana -p {PW2} vpn.acme.io", PW2)
_add("unknown-client-quoted", f"tabcmd login -s https://tableau.acme.io -u etl -p '{PW}'", PW)
_add("unknown-client-slash", f"syncctl /u:etl /p:{PW2} /target:lake", PW2)
# -- the commands that set configuration
_add("git-config-password", f"git config --global user.password {PW2}", PW2)
_add("npm-config-token", "npm config set //npm.acme.io/:_authToken " + (k := alnum(36)), k)
_add("yarn-config-token", "yarn config set npmAuthToken " + (k := alnum(36)), k)
_add("aws-configure-set", "aws configure set aws_secret_access_key " + (k := b64(40)) + " --profile etl", k)
_add("rclone-config-create", f"rclone config create acme sftp host files.acme.org user etl pass {PW2}", PW2)
_add("redis-config-set", f"redis-cli CONFIG SET requirepass {PW2}", PW2)
_add("nmcli-psk", f"nmcli con modify lab wifi-sec.psk {PW2}", PW2)
_add("poetry-token", "poetry config pypi-token.acme " + (k := alnum(40)), k)
_add("dvc-secret-key", "dvc remote modify lake secret_access_key " + (k := b64(40)), k)
# -- protocol transcripts
_add("ftp-transcript", f"220 files.acme.org FTP\nUSER etl\n331 Password required\nPASS {PW2}\n230 Logged in", PW2)
_add("imap-login", f"a1 LOGIN ana@acme.io {PW2}", PW2)
_add("smtp-auth-plain", "AUTH PLAIN " + (k := base64.b64encode(f"\0ana\0{PW2}".encode()).decode()), k)
_add("redis-acl-auth", f"127.0.0.1:6379> AUTH etl {PW2}\nOK", PW2)
# -- PowerShell
_add("pscredential", f"$c = New-Object PSCredential('etl', (ConvertTo-SecureString '{PW}' -AsPlainText -Force))", PW)
_add("securestring-string", f'ConvertTo-SecureString -AsPlainText -Force -String "{PW}"', PW)
# -- a name, blanks and its value
_add("gradle-credentials", f"credentials {{ username 'ci'; password '{PW}' }}", PW)
_add("gradle-keypassword", f"        keyPassword '{PW}'", PW)
_add("redis-conf", f"bind 127.0.0.1\nrequirepass {PW2}\nmaxmemory 2gb", PW2)
_add("redis-masterauth", f"masterauth {PW2}", PW2)
_add("csh-setenv", f"setenv DB_PASSWORD {PW2}", PW2)
_add("dockerfile-env", f"ENV DB_PASSWORD {PW2}", PW2)
_add("expect-set", f'set password "{PW}"\nspawn ssh etl@gw', PW)
_add("nginx-header", 'proxy_set_header X-Api-Key "' + (k := alnum(32)) + '";', k)
# -- code: constructors and setters given literals
_add("net-credential", f'var c = new NetworkCredential("etl", "{PW}");', PW)
_add("pika-credentials", f"creds = pika.PlainCredentials('etl', '{PW2}')", PW2)
_add("azure-key-credential", 'AzureKeyCredential("' + (k := alnum(32)) + '")', k)
_add("keyring-set", f'keyring.set_password("warehouse", "etl", "{PW}")', PW)
_add("java-password-auth", f'new PasswordAuthentication("etl", "{PW}".toCharArray())', PW)
_add("httpclient-credentials", f'new UsernamePasswordCredentials("etl", "{PW}")', PW)
_add("neo4j-basic-auth", f'GraphDatabase.driver(uri, auth=basic_auth("neo4j", "{PW2}"))', PW2)
# -- headers and cookies
_add("auth-any-scheme", "curl -H 'Authorization: Splunk " + (k := uuid()) + "' https://splunk:8088/services", k)
_add("vault-header", "curl -H 'X-Vault-Token: s." + (k := alnum(24)) + "' https://vault:8200/v1/kv/x", k)
_add("set-cookie", "Set-Cookie: connect.sid=" + (k := alnum(40)) + "; Path=/; HttpOnly", k)
_add("curl-b", 'curl -b "PHPSESSID=' + (k := alnum(26)) + '" https://admin.acme.io/', k)
_add("cookies-dict", 'requests.get(url, cookies={"sessionid": "' + (k := alnum(32)) + '"})', k)
_add("jsessionid-hex", "Cookie: _ga=GA1.2.1234567.1700000000; JSESSIONID=" + (k := hexs(32).upper()), k)
# -- a key's name that read as a table's, a glued password, a pre-shared key, a token with a dot
_add("routing-key-yaml", "pagerduty:\n  routing_key: " + (k := hexs(32)), k)
_add("integration-key", 'integration_key = "' + (k := hexs(32)) + '"', k)
_add("wireguard-psk", "PresharedKey = " + (k := b64(43) + "="), k)
_add("wpa-psk-bare", f"wpa_psk={PW2}", PW2)
_add("glued-smtppass", f"smtppass = {PW2}", PW2)
_add("vault-login", "vault login s." + (k := alnum(24)), k)
