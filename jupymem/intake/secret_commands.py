"""Secrets told by their place in a command: command lines, SQL, protocol transcripts.

Part of the generic layer (``secret_generic`` reads names and values). A password often
stands where no name says so: ``psexec -u u -p PW``, ``lftp -u u,PW``, ``git config
sendemail.smtppass PW``, ``ALTER USER etl PASSWORD 'PW'``, a redis ``AUTH PW``. What says it
is the program around it, so this module knows programs, each by how it takes a password:

* a table of clients (``_CLIENTS``): the options that give a password (``-p``, ``-P``,
  ``/p:``, ``-U u%pw``, ``-u u,pw``, ``-passin pass:``), the position of one
  (``net user NAME PW``), or, for the commands that set configuration (``git config``,
  ``dvc remote modify``, ``npm config set``, ``aws configure set``, redis' ``CONFIG SET``),
  an argument naming a credential followed by its value;
* for clients the table does not know: a password option after a user option on one
  command line (``tool -u ana -p Gl4cier9``), where the value must look like a password
  and not like a port, a number, a path or a word (``docker run -u 1000 -p 8888:8888``);
* SQL: ``PASSWORD '...'`` and ``IDENTIFIED BY`` in the statements that set one (``CREATE
  USER``, ``ALTER ROLE``, ``USER MAPPING ... OPTIONS``, ``SET PASSWORD``, a scoped credential);
* protocol transcripts: redis ``AUTH``, FTP and POP3 ``PASS`` after ``USER``, IMAP ``LOGIN``,
  SMTP ``AUTH PLAIN``; PowerShell's ``ConvertTo-SecureString "..."``; Oracle's ``u/pw@db``.

A value is a password where the syntax says so (``_word_password``: any value but a
placeholder, a variable or a common word); the heuristic tier asks more. Stdlib only.
"""

from __future__ import annotations

import base64
import binascii
import re

from .secret_generic import _finding, _made_of_words, _token_value, credential_class
from .secret_rules import _FOLD, _SYMBOL, Rule, _code_after, _random_looking, _word_password

Finding = tuple[str, str, int, int]
_PASSWORD = "password", "a password"

# -- clients ----------------------------------------------------------------------------

# Each client (its commands, ``|`` between several) and how it takes a password:
#   "-p"       the next argument, or after "=" (--pass=pw)
#   "-P*"      glued to the option or the next argument (sqlcmd -Ppw, -P pw)
#   "-p+"      glued only (7z -ppw; a lone -p asks)
#   "/p:"      glued after the colon, ignoring case (xfreerdp /p:pw, cmdkey /pass:pw)
#   "-U~%"     the part after % of the option's argument (smbclient -U user%pw; lftp -u user,pw: "-u~,")
#   "-k=pass:" the part after "pass:" of the option's argument (openssl -passin pass:pw)
#   "#2"       the second argument that is no option (net user NAME PW); "#3 -b": only with -b;
#              "#1 token": a token, not any word
#   "=word"    the argument after that word (nmcli ... password PW, db2 ... using PW)
#   "@"        an argument that names a credential and the argument after it, or NAME=VALUE
#              (git config sendemail.smtppass PW, dvc remote modify R password PW)
_CLIENTS: tuple[tuple[str, str], ...] = (
    ("sqlcmd|bcp|osql|tsql", "-P*"),
    ("zip|unzip", "-P"),
    ("mongo|mongosh|mongodump|mongorestore|mongoexport|mongoimport|mongostat|mongotop|mongofiles", "-p"),
    ("ldapsearch|ldapadd|ldapmodify|ldapdelete|ldapwhoami|ldapcompare|ldapmodrdn|ldapexop|ldapurl", "-w"),
    ("ldappasswd", "-w -a -s"),
    ("7z|7za|7zr|rar|unrar", "-p+"),
    ("keytool|jarsigner", "-storepass -keypass -srcstorepass -deststorepass -srckeypass -destkeypass -new"),
    ("openssl", "-passin=pass: -passout=pass: -pass=pass: -password=pass: -kpass=pass: -k -K"),
    ("smbclient|rpcclient|smbget|smbcacls|mount.cifs", "-U~% --user~% --username~%"),
    ("smbmap", "-p -U~% --user~%"),
    ("ssh-keygen", "-N -P"),
    ("htpasswd|mosquitto_passwd", "#3 -b"),  # -b FILE USER PW (htpasswd -nb USER PW: no file)
    ("net use", "/user:>"),
    ("net user", "#2"),
    ("az login", "-p --password"),
    ("mc alias set|mc config host add", "#4"),
    ("mc admin user add", "#3"),
    ("psexec|psexec64|paexec", "-p"),
    ("influx", "-p"),
    ("xfreerdp|xfreerdp3|wlfreerdp|wfreerdp|sdl-freerdp|sdl-freerdp3", "/p: -p: /pth:"),
    ("rdesktop", "-p"),
    ("cmdkey", "/pass:"),
    ("wmic", "/password:"),
    ("winrs", "-p: -password: /p: /password:"),
    ("schtasks", "/RP /P"),
    ("sqlpackage", "/tp: /sp: /TargetPassword: /SourcePassword:"),
    ("pscp|plink|psftp", "-pw"),
    ("lftp", "-u~,"),
    ("cqlsh|beeline|hdbsql|rabbitmqadmin|ncftp|ncftpget|ncftpput|ncftpls", "-p"),
    ("vsql", "-w"),
    ("nzsql|nzload", "-pw -W"),
    ("isql", "#3"),
    ("db2", "=using"),
    ("mysqladmin", "=password"),
    ("rabbitmqctl add_user|rabbitmqctl change_password|rabbitmqctl authenticate_user", "#2"),
    ("mosquitto_pub|mosquitto_sub|mosquitto_rr|ipmitool|p4", "-P"),
    ("snmpwalk|snmpget|snmpset|snmpbulkwalk|snmpbulkget|snmpgetnext|snmptable|snmptrap|snmpinform|snmpstatus"
     "|snmpdf|snmpnetstat|snmpusm|snmpvacm|snmpdelta", "-A -X -c"),
    ("dsadd|dsmod", "-pwd"),
    ("sc|sc.exe", "=password="),
    ("helm registry login|oras login|crane auth login|buildah login", "-p"),
    ("skopeo", "--creds~: --src-creds~: --dest-creds~:"),
    ("gh secret set", "-b --body"),
    ("vault login", "#1 token"),
    ("rootpw", "#1"),  # kickstart: rootpw --plaintext PW (--iscrypted $6$...: a hash, no password)  # a token: "vault login cell" is prose
    # the commands that set configuration: a credential's name, then its value
    ("git config|dvc remote modify|dvc remote add|dvc config|npm config set|yarn config set|pnpm config set"
     "|pip config set|aws configure set|gcloud config set|poetry config|rclone config create|rclone config update"
     "|netlify env:set|doppler secrets set|nmcli", "@"),
    ("config set", "@"),  # redis: CONFIG SET requirepass PW
)
_SPECS: dict[str, tuple[str, ...]] = {
    command: tuple(spec.split()) for commands, spec in _CLIENTS for command in commands.split("|")
}
# Windows' clients: an argument "/word" is an option, not a path.
_WINDOWS = frozenset(c for c, spec in _SPECS.items() if any(s.startswith("/") for s in spec)) | {
    "net user", "psexec", "psexec64", "paexec", "sc", "sc.exe"}


def _trie(words: list[str]) -> str:
    """One regex for many words, branching by character (a trie): where a plain alternation tries
    every word at every position, this compares a character or two. A blank in a word is any run
    of blanks."""
    if "" in words and len(words) == 1:
        return ""
    branches: dict[str, list[str]] = {}
    for word in words:
        if word:
            branches.setdefault(word[0], []).append(word[1:])
    parts = []
    for first, rests in sorted(branches.items()):
        head = r"[ \t]+" if first == " " else re.escape(first)
        tail = _trie(rests)
        optional = "" in rests
        if tail and optional:
            parts.append(f"{head}(?:{tail})?")
        else:
            parts.append(head + (f"(?:{tail})" if "|" in tail else tail))
    return parts[0] if len(parts) == 1 else "(?:" + "|".join(parts) + ")"


# The command and the rest of its line: a match takes its command line whole, so a text of many
# commands is read once (a command inside another's arguments is not looked at again).
_CLIENT_RE = re.compile(
    r"(?i)(?<![\w.\-])(?P<cmd>" + _trie(sorted(_SPECS)) + r")(?:\.exe)?(?=[ \t\"',])(?P<rest>[^\n|;&)\]]{0,600})"
)

# An argument: quoted (its inside is the value), or bare up to a blank, a quote, a bracket.
# In a repr the quotes are escaped: \'pw\'.
_ARG = re.compile(r"\\?\"(?P<dq>[^\"\n]*?)\\?\"|\\?'(?P<sq>[^'\n]*?)\\?'|(?P<bare>[^\s\"'\[\]()\\]+(?:\\[^\s\"']+)*)")
Arg = tuple[str, int, int]


def _args(text: str, start: int, stop: int) -> list[Arg]:
    """The arguments of the command line in ``text[start:stop]``: (argument, start, end), a quoted
    argument without its quotes; at most 60."""
    out = []
    for m in _ARG.finditer(text, start, stop):
        group = next(g for g in ("dq", "sq", "bare") if m.group(g) is not None)
        if group == "bare" and not m.group(group).strip(","):
            continue  # the commas of a list: ["psexec", "-p", "pw"]
        out.append((m.group(group).rstrip(",") if group == "bare" else m.group(group), *m.span(group)))
        if len(out) >= 60:
            break
    return out


def _is_option(arg: str, windows: bool) -> bool:
    return arg.startswith("-") or (windows and arg.startswith("/") and "/" not in arg[1:])


def _password_at(text: str, value: str, start: int, _end: int = 0) -> Finding | None:
    """``value`` at ``start`` as a password, if it is one (the end follows from the value: an
    argument's tuple is passed whole)."""
    end = start + len(value)
    if value.startswith("-") or not _word_password(value) or _code_after(text, end):
        return None  # mongosh -p --authenticationDatabase admin: the option prompts, the next is an option
    return (*_PASSWORD, start, end)


def _judge_value(text: str, cls: str, value: str, start: int, end: int) -> Finding | None:
    """A value given to a credential's name on a command line: a password where the name says
    password, a token-looking value otherwise (``credential.helper store`` is none)."""
    if cls in ("password", "pass"):
        return _password_at(text, value, start, end)
    return _finding(cls, "", start, start + len(value)) if _token_value(value) else None


def _by_name(text: str, args: list[Arg]) -> list[Finding | None]:
    """``@``: an argument that names a credential and the one after it, or ``NAME=VALUE``."""
    found: list[Finding | None] = []
    i = 0
    while i < len(args):
        arg, start, _ = args[i]
        name, eq, value = arg.partition("=")
        if name.lower().startswith("http-basic.") and not eq and i + 2 < len(args):
            found.append(_password_at(text, *args[i + 2]))  # poetry config http-basic.REPO USER PASSWORD
            i += 3
            continue
        cls = credential_class(name.lstrip("-")) if name.lstrip("-") else None
        if cls is not None and eq:
            found.append(_judge_value(text, cls, value, start + len(name) + 1, start + len(arg)))
        elif cls is not None and i + 1 < len(args) and not name.startswith("-"):
            found.append(_judge_value(text, cls, *args[i + 1]))
            i += 1
        i += 1
    return found


def _positional(text: str, args: list[Arg], spec: tuple[str, ...], windows: bool) -> list[Finding | None]:
    """``#n``: the n-th argument that is no option; ``#3 -b``: only when a short option holds b
    (htpasswd without -b asks for the password; with -n it prints, and takes no file)."""
    n = int(spec[0][1:])
    short = [a for a, _, _ in args if a.startswith("-") and not a.startswith("--")]
    plain = [a for a in args if not _is_option(a[0], windows) and "=" not in a[0]]
    if spec[1:] == ("token",):
        return [_judge_value(text, "token", *plain[n - 1])] if len(plain) >= n else []
    if len(spec) > 1:
        if not any(spec[1][1:] in o for o in short):
            return []
        n -= any("n" in o for o in short)
    return [_password_at(text, *plain[n - 1])] if len(plain) >= n else []


def _option_value(text: str, option: str, args: list[Arg], i: int) -> Finding | None:
    """The password that ``option`` gives, if ``args[i]`` is that option."""
    arg, start, _ = args[i]
    following = args[i + 1] if i + 1 < len(args) else None
    if option.startswith("="):  # a keyword: "password PW"
        return _password_at(text, *following) if following and arg.lower() == option[1:] else None
    if option == "/user:>":  # net use ... /user:NAME PW
        ok = arg.lower().startswith("/user:") and following and not following[0].startswith("/")
        return _password_at(text, *following) if ok and following else None
    flag, tilde, sep = option.partition("~")
    if tilde:  # the part after a separator of the option's argument: -U user%pw, -Uuser%pw, --user=user%pw
        if arg == flag and following:
            value, v_start, _ = following
        elif arg.startswith(flag + "=") or (len(flag) == 2 and arg.startswith(flag) and len(arg) > 2):
            cut = len(flag) + (arg[len(flag)] == "=")
            value, v_start = arg[cut:], start + cut
        else:
            return None
        if sep not in value:
            return None
        cut = value.index(sep) + 1
        return _password_at(text, value[cut:], v_start + cut, v_start + len(value))
    if option.endswith(":") and "=" not in option:  # glued after a colon: /p:pw
        if arg.lower().startswith(option.lower()) and len(arg) > len(option):
            return _password_at(text, arg[len(option) :], start + len(option), start + len(arg))
        return None
    flag, _, prefix = option.partition("=")
    bare = flag.rstrip("*+")
    if arg == bare and not flag.endswith("+") and following:
        value, v_start, _ = following
    elif arg.startswith(bare + "=") and not prefix and len(bare) > 2:
        value, v_start = arg[len(bare) + 1 :], start + len(bare) + 1
    elif flag.endswith(("*", "+")) and arg.startswith(bare) and len(arg) > len(bare):
        value, v_start = arg[len(bare) :], start + len(bare)
    else:
        return None
    if prefix:
        if not value.startswith(prefix):
            return None  # openssl -passin env:VAR, file:path
        value, v_start = value[len(prefix) :], v_start + len(prefix)
    return _password_at(text, value, v_start, v_start + len(value))


def _judge_client(m: re.Match[str], text: str) -> list[Finding]:
    command = " ".join(m.group("cmd").translate(_FOLD).lower().split())  # as the regex reads it: ſqlcmd
    spec = _SPECS[command]
    start = m.end("cmd") + (text[m.end("cmd") : m.end("cmd") + 1] in ("'", '"'))  # the quote after "psexec" in a list
    args = _args(text, start, m.end())
    if spec[0].startswith("#"):
        found = _positional(text, args, spec, command in _WINDOWS)
    elif spec == ("@",):
        found = _by_name(text, args)
    else:
        found = [_option_value(text, option, args, i) for i in range(len(args)) for option in spec]
    return [f for f in found if f is not None]


# -- clients the table does not know ------------------------------------------------------

# A password option after a user option on one command line: ``tool -u ana -p PW``,
# ``tool /u:ana /p:PW``, ``tool --user ana -P PW``.
_USER_THEN_PASSWORD = re.compile(
    r"(?<![\w\-])(?:-[uU]|--?user(?:name)?)(?:[ \t]+|=)['\"]?[^\s'\"\-][^\s'\"]{0,40}['\"]?[^\n|;&]{0,200}?"
    r"[ \t](?:-[pP]|-pw|--?pass)[ \t]+['\"]?(?P<v>[^\s'\"]+)"
    r"|(?i:(?<![\w/])/u(?:ser(?:name)?)?:[^\s/][^\n|;&]{0,200}?[ \t][/\-]p(?:ass(?:word)?|wd|w)?:)['\"]?(?P<w>[^\s'\"]+)"
)
# Clients whose -p after -u is no password, or is read by their own rule.
_NOT_A_CLIENT = re.compile(r"(?i)\b(?:mysql\w*|mariadb\w*|docker|podman|nerdctl|sshpass|redis-cli|curl)\b")
_PORTS = re.compile(r"[\d:,.\-/]+")  # 8888:8888, 5432, 1,2,3, 127.0.0.1:80:80
_FILE = re.compile(r".*[/\\].*|.*\.[A-Za-z]{1,5}")


def _judge_user_then_password(m: re.Match[str], text: str) -> Finding | None:
    group = "v" if m.group("v") is not None else "w"
    start, end = m.span(group)
    value = text[start:end]
    line_start = max(text.rfind("\n", max(0, m.start() - 300), m.start()) + 1, m.start() - 300, 0)
    if _NOT_A_CLIENT.search(text, line_start, m.start()) or _PORTS.fullmatch(value) or _FILE.fullmatch(value):
        return None
    if not _word_password(value) or _code_after(text, end) or _made_of_words(value):
        return None  # python -u train.py -p exp42: a name made of words, not a password
    return (*_PASSWORD, start, end) if _random_looking(value) or _SYMBOL.search(value) else None


# -- SQL --------------------------------------------------------------------------------------

# ``PASSWORD 'pw'``, ``PASSWORD = N'pw'``, ``PASSWORD('pw')``, ``IDENTIFIED [WITH plugin] BY 'pw'``
# (or a bare word, as Oracle takes it), ``SECRET = 'pw'`` of a scoped credential.
_SQL = re.compile(
    r"(?i)\b(?:set[ \t]+password(?:[ \t]+for[ \t]+[^=\n]{1,120}?)?[ \t]*=[ \t]*(?:password[ \t]*\([ \t]*)?"
    r"|(?:encrypted[ \t]+)?password|identified(?:[ \t]+with[ \t]+['\"`]?\w+['\"`]?)?[ \t]+by"
    r"(?:[ \t]+password)?|secret)[ \t]*(?:=[ \t]*|\([ \t]*)?"
    r"(?:N?'(?P<sq>[^'\n]{1,200})'|\"(?P<dq>[^\"\n]{1,200})\"|(?P<bare>[^\s;'\"(),]{1,200}))"
)
# What makes such a clause a statement that sets a password (not a column, not prose).
_SQL_CONTEXT = re.compile(
    r"(?i)\b(?:create|alter)[ \t]+(?:user|role|login|group)\b|\bconnect[ \t]+to\b|\bgrant\b|\buser[ \t]+mapping\b"
    r"|\bset[ \t]+password\b|\boptions[ \t]*\(|\bscoped[ \t]+credential\b|\bcreate[ \t]+credential\b"
    r"|\bwith[ \t]+identity\b"
)


def _judge_sql(m: re.Match[str], text: str) -> Finding | None:
    group = next(g for g in ("sq", "dq", "bare") if m.group(g) is not None)
    start, end = m.span(group)
    value = text[start:end]
    clause = m.group().lower()
    if group != "sq" and (not clause.startswith("identified") or value.lower() in ("values", "password")):
        return None  # PASSWORD NULL, IDENTIFIED BY VALUES 'hash' (a verifier), a bare word after PASSWORD
    statement_start = max(text.rfind(";", 0, m.start()), text.rfind("\n\n", 0, m.start()), m.start() - 400, 0)
    if not clause.startswith("set") and not _SQL_CONTEXT.search(text, statement_start, m.start()):
        return None
    return (*_PASSWORD, start, end) if _word_password(value) and " " not in value else None


# -- protocol transcripts and shells ----------------------------------------------------------

# A prompt before a command typed in a client: redis-cli's "127.0.0.1:6379> ", "> ", "C: ".
_PROMPT = r"(?:[\w.:\-\[\]]{0,40}>[ \t]*|[CS]:[ \t]*)?"
# Where a line starts and ends, also as a string literal holds it (its repr: 'AUTH etl pw').
_BOL = r"(?:^|(?<=[\s:=(\[{,])[\"'`])"
_EOL = r"[ \t]*(?:[\"'`][ \t]*[,)}\]]*[ \t]*)?\r?$"
_PROTOCOL = re.compile(
    # redis AUTH [user] pw, SMTP AUTH PLAIN <base64 of \0user\0pw>; in lower case only after a
    # prompt (redis-cli's "> auth pw"): "auth = self.client_auth(...)" and "auth is configured" are code and prose
    rf"(?m){_BOL}[ \t]*(?:{_PROMPT}AUTH|(?:[\w.:\-\[\]]{{0,40}}>[ \t]*)auth)[ \t]+"
    r"(?:(?P<user>[^\s\"'=:()]+)[ \t]+)?(?P<v>[^\s\"'=()]+={0,2})"
    rf"{_EOL}"
    # FTP and POP3: PASS pw after USER u
    rf"|{_BOL}[ \t]*{_PROMPT}USER[ \t]+\S+[ \t]*\r?\n(?:[^\n]*\n){{0,2}}?[ \t]*{_PROMPT}PASS[ \t]+(?P<p>[^\s\"']+){_EOL}"
    # IMAP: a1 LOGIN user pw
    rf"|{_BOL}[ \t]*{_PROMPT}(?:[A-Za-z]{{0,2}}\d{{1,4}}|\.)[ \t]+LOGIN[ \t]+\S+[ \t]+(?P<i>[^\s\"']+){_EOL}"
)
_SASL_MECHANISMS = frozenset("plain login cram-md5 digest-md5 xoauth2 oauthbearer scram-sha-1 scram-sha-256 gssapi".split())


def _judge_protocol(m: re.Match[str], text: str) -> Finding | None:
    group = next(g for g in ("v", "p", "i") if m.group(g) is not None)
    start, end = m.span(group)
    value = text[start:end].strip("\"")
    end = start + len(value)
    user = m.group("user")
    if group == "v" and user is not None and user.lower() in _SASL_MECHANISMS:
        if user.lower() != "plain":
            return None
        try:  # AUTH PLAIN: base64 of "\0user\0password"
            decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True)
        except (binascii.Error, ValueError):
            return None
        return ("password", "a password", start, end) if decoded.count(b"\0") >= 1 and len(decoded) >= 6 else None
    if group == "v" and value.lower() in _SASL_MECHANISMS:
        return None
    return _password_at(text, value, start, end)


# PowerShell: ConvertTo-SecureString "pw" -AsPlainText -Force (also -String "pw" after options)
_SECURE_STRING = re.compile(
    r"(?i)\bConvertTo-SecureString(?:[ \t]+-(?!String\b)\w+)*[ \t]+(?:-String[ \t]+)?"
    r"(?P<q>[\"'])(?P<v>[^\"'\n]{1,400})(?P=q)"
)


def _judge_secure_string(m: re.Match[str], text: str) -> Finding | None:
    start, end = m.span("v")
    return _password_at(text, text[start:end], start, end)


# Oracle's user/password@database, on a client's command line and in a JDBC thin URL.
_ORACLE = re.compile(
    r"(?:\b(?:sqlplus|expdp|impdp|sqlldr|rman|dgmgrl)(?:[ \t]+-\w+)*[ \t]+['\"]?|\bjdbc:oracle:(?:thin|oci):)"
    r"[\w$#.]{1,60}/(?P<v>[^\s@/'\"]{1,200})@"
)


def _judge_oracle(m: re.Match[str], text: str) -> Finding | None:
    start, end = m.span("v")
    return _password_at(text, text[start:end], start, end)


# -- the rules --------------------------------------------------------------------------------


def _r(pattern: re.Pattern[str], *hints: str, **kw: object) -> Rule:
    return Rule("password", "a password", pattern, tuple(hints), token=False, **kw)  # type: ignore[arg-type]


COMMANDS: list[Rule] = [
    # no hint: every text is looked at once, by the trie of the commands, which costs less
    # than looking for a hundred words one by one (sc, gh, net are inside many words)
    _r(_CLIENT_RE, "", gate=re.compile(_CLIENT_RE.pattern.replace("(?i)", "", 1)), folded=True, judge=_judge_client),
    _r(_ORACLE, "sqlplus", "expdp", "impdp", "sqlldr", "rman", "dgmgrl", "jdbc:oracle:", judge=_judge_oracle),
    _r(_USER_THEN_PASSWORD, "-u", "/u", folded=True,
       gate=re.compile(r"(?:(?<![\w\-])(?:-u|--?user\w*)|(?<![\w/])/u\w*:)[^\n]{0,300}?[ \t](?:-p|-pw|--?pass|[/\-]p\w*:)"),
       judge=_judge_user_then_password),
    _r(_SQL, "password", "identified", "secret", folded=True,
       gate=re.compile(r"(?:password|secret)[ \t]*(?:=[ \t]*|\([ \t]*)?n?'|identified\b|set[ \t]+password"), judge=_judge_sql),
    _r(_PROTOCOL, "AUTH", "auth", "PASS", "LOGIN", judge=_judge_protocol),
    _r(_SECURE_STRING, "convertto-securestring", folded=True, judge=_judge_secure_string),
]
