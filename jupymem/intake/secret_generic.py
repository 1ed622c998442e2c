"""Secrets told by what they are, not by a vendor's prefix: the generic layer of the rules.

``secret_rules`` knows tokens by their prefixes and passwords by a few syntaxes. Most
credentials in notebooks and configuration have no prefix: ``DB_PASSWORD_PROD=...``,
``secret_key_base: ...``, ``<password>...</password>``, ``PWD={...}``, ``sqlcmd -P ...``,
``auth=('u', 'pw')``, a kubeconfig's ``client-key-data:``, a webhook URL whose path is
its token. This layer reads them by four things:

* a *credential-bearing name*: one of its parts (split at ``_ . - :`` and camelCase) is
  a password, pass, pwd, psk, secret, token, key, auth or credential word (or one glued to
  its system: ``smtppass``, ``requirepass``), the parts after it
  are modifiers (``_PROD``, ``_base``, ``-data``, ``_v2``) and not what makes a name an
  ordinary identifier (``password_hash``, ``api_key_id``, ``token_count``, ``sort_key``);
* given a value in any syntax people use: ``=``/``:`` (env, YAML, TOML, INI, JSON,
  properties), XML elements and ``key=... value=...`` attributes, a call's
  ``("name", "value")`` pair, a URL's query, a name and its value with blanks between on a
  line of their own (``storePassword 'pw'``, ``requirepass pw``, ``ENV DB_PASSWORD pw``);
* a value that is a literal, not a stand-in: a password where the syntax says so
  (``_word_password``), otherwise a long random-looking run (``_token_like``: mixed
  letters and digits, entropy of at least 3 bits a character);
* key material without armour: base64 that decodes to a PEM private key or a service
  account JSON, DER private keys (PKCS#8, PKCS#1, SEC1), OpenSSH key bodies, JWK
  private members.

Two more modules belong to the layer: ``secret_calls`` (calls, connection strings, headers
and cookies) and ``secret_commands`` (command lines, SQL, protocol transcripts); both use
the name analysis here. What it leaves alone, by design: placeholders (``${PASSWORD}``,
``<your password>``, ``"***"``), names bound to code (``password = os.environ["X"]``),
identifiers and prose.

Each rule is a ``Rule`` with hints and, where a hint alone would wake it too often, a
``gate`` (a regex on the folded text that every match needs); ``judge`` looks at a match
and its text and returns the finding or None. Stdlib only, regexes compiled at import.
"""

from __future__ import annotations

import base64
import binascii
import re

from .secret_rules import (
    _FOLD,
    _KEY_LABEL,
    _SYMBOL,
    Rule,
    _alone_on_its_line,
    _code_after,
    _label_for,
    _literal_value,
    _placeholder,
    _random_looking,
    _token_like,
    _word_password,
)

Finding = tuple[str, str, int, int]

# -- names ----------------------------------------------------------------------------

# Where a name splits into its parts: separators and camelCase (``npmAuthToken``, ``APIKey``).
_SPLIT = re.compile(r"[_.\-$@:/\\]+|(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_PASSWORD_PARTS = frozenset(
    "password passwd pwd passphrase passcode pw pword passwort storepass keypass srcstorepass deststorepass "
    "srckeypass destkeypass psk rootpw masterauth".split()
)
# Words that end in "pass" and are no password (a glued one is: smtppass, dbpass, requirepass).
_NOT_GLUED_PASS = frozenset(
    """bypass compass encompass overpass underpass trespass surpass multipass onepass twopass firstpass lastpass
    renderpass subpass prepass zpass depthpass shadowpass highpass lowpass bandpass allpass notchpass""".split()
)
# A key glued to what makes it a credential.
_GLUED_KEYS = frozenset(
    "apikey secretkey privatekey privkey accesskey accountkey authkey masterkey encryptionkey "
    "licensekey sharedkey presharedkey appkey clientkey subscriptionkey routingkey integrationkey".split()
)
# Words that make a "<word> key" a credential (as ``secrets_scan._KEY_QUALIFIERS``).
_KEY_QUALIFIERS = frozenset(
    """api access secret private license licence auth signing master client account service encryption admin
    app application deploy deployment webhook subscription developer personal consumer root sas storage ssh gpg
    pgp bearer session fernet hmac jwt aes crypt crypto cipher shared preshared psk integration""".split()
)
# After the credential word: what makes the name an identifier about a secret, not one.
_NOT_AFTER = frozenset(
    """hash hashed hashes hasher digest salt salted id ids name names file files filename path paths dir url uri
    urls endpoint type types length len count counts size policy policies field fields column columns col env
    var vars variable prompt hint label expiry expires expiration expired ttl timeout version format mode enabled
    disabled required min max rotation reset regex re pattern prefix header headers param params kind ref arn index
    idx limit usage encoding algorithm alg method provider manager source location loc class cls input widget form
    error errors message msg help text placeholder template validator validation confirm confirmation change changed
    strength check checker is has allowed fn func function callback handler getter setter attr attribute vault
    secret_name store lifetime age schema scheme spec config option options flag flags setting settings list
    request response cache rate ratio percent pct threshold mark grade score through thru mgr encoder decoder
    sha1 sha256 sha512 md5 crc crc32 checksum fingerprint thumbprint node nodes tag tags""".split()
)
# What may follow a loose key's "key" and keep it one: stages, encodings, versions.
_MODIFIERS = frozenset(
    """prod production dev development staging stage stg test testing qa uat live sandbox base data value b64 base64
    raw enc new old primary secondary main backup local remote default current""".split()
)
# Before "key": the keys of tables, maps and caches.
_NOT_BEFORE_KEY = frozenset(
    """primary foreign sort join partition cache dedup dedupe natural surrogate composite lookup group groupby dict
    map row unique idempotency entity cluster shard hash index sorting distribution dist sk pk fk range grouping
    merge match object s3 blob redis dynamo cursor page pagination next continuation bucket socket
    websocket""".split()
)
# Before "pass": the passes of an algorithm or a build, not passwords.
_NOT_BEFORE_PASS = frozenset(
    """first second third fourth fifth last final next prev previous one two three single multi double each every
    forward backward backwards fwd bwd render shadow compile lint test tests check training train eval warmup cleanup
    clean dedupe dedup initial init main extra full partial quick fast slow nth by sub high low band all boarding
    hall free bus day season ski""".split()
)
# Before "token": tokens that are not credentials.
_NOT_BEFORE_TOKEN = frozenset(
    """next page continuation cursor sync pagination cancellation cancel eos bos pad unk sep cls mask special start
    end stop bpe""".split()
)


def _part_class(part: str) -> str | None:
    low = part.translate(_FOLD).lower()  # as the rules that ignore case read it: paſſword
    if low in _PASSWORD_PARTS or low.endswith(("password", "passwd", "passphrase")):
        return "password"
    if low == "pass":
        return "pass"  # a password (dbPass, smtp_pass) unless its word before says a run (first_pass)
    if len(low) > 5 and low.endswith(("pass", "pwd")) and low not in _NOT_GLUED_PASS:
        return "pass"  # glued to its system (smtppass, requirepass, dbpwd), or code's (userpass = username)
    if low.endswith("token"):
        return "token"
    if low.endswith("secret"):
        return "secret"
    if low == "key":
        return "key"
    if low in _GLUED_KEYS:
        return "qualified-key"
    if low == "auth":
        return "auth"
    if low in ("credential", "credentials", "cred", "creds"):
        return "credential"
    if part == "PAT":
        return "token"
    return None


def credential_class(name: str) -> str | None:
    """What kind of credential a name bears, or None for an ordinary identifier.

    The last credential part decides: ``DB_PASSWORD_PROD`` and ``secret_key_base`` bear one,
    ``password_hash``, ``api_key_id`` and ``sort_key`` do not, nor does a lone ``key``."""
    parts = [p for p in _SPLIT.split(name) if p]
    for i in range(len(parts) - 1, -1, -1):
        cls = _part_class(parts[i])
        if cls is None:
            continue
        before = parts[i - 1].translate(_FOLD).lower() if i else ""
        after = [p.translate(_FOLD).lower() for p in parts[i + 1 :]]
        if any(p in _NOT_AFTER for p in after) or any(p.translate(_FOLD).lower() in ("public", "pub") for p in parts[:i]):
            return None
        if cls == "key":
            if len(parts) == 1 or before in _NOT_BEFORE_KEY:
                return None
            if before in _KEY_QUALIFIERS:
                return "qualified-key"
            # a loose key (KAGGLE_KEY, fernet_key_prod): only modifiers may follow it
            return "key" if all(p in _MODIFIERS or p.isdigit() or re.fullmatch(r"v\d+", p) for p in after) else None
        if cls == "token" and before in _NOT_BEFORE_TOKEN:
            return None
        if cls == "pass" and before and before not in _NOT_BEFORE_PASS:
            return "password"
        return cls
    return None


def _finding(cls: str, name: str, start: int, end: int) -> Finding:
    if cls in ("password", "pass"):
        return "password", "a password", start, end
    if cls == "token":
        return "token", "a token", start, end
    if cls in ("key", "qualified-key"):
        return "api-key", "an API key or secret key", start, end
    return (*_label_for(name), start, end) if cls == "secret" else ("secret", "a secret", start, end)


def _value_ok(cls: str, value: str, *, literal: bool) -> bool:
    """Whether ``value``, given to a name of class ``cls``, is a secret. ``literal``: the
    syntax makes a bare word a literal (a string, an XML text, a configuration line)."""
    if cls in ("password", "pass"):
        if cls == "pass" and _token_value(value):
            return True  # rclone's pass = <obscured>: a token wherever it stands
        if not (_word_password(value) and (literal or (len(value) >= 6 and _random_looking(value)))):
            return False
        if _IMPORT_PATH.fullmatch(value):
            return False
        # a pass that may be a run's (first_pass, pass) or code's (userpass = username): not a name
        # made of words (dedupe_v2), and random-looking
        return cls == "password" or (
            not _made_of_words(value) and (_random_looking(value) or _SYMBOL.search(value) is not None)
        )
    return _token_value(value)


# What a token is made of: base64 (standard and URL-safe), hex, percent-encoding, a few separators.
_TOKEN_CHARS = re.compile(r"[A-Za-z0-9+/=_\-.~:%]+")
# The pieces of an identifier: acronyms, words, numbers (SSECustomerKeyMD5, LiteLLM_VerificationToken).
_PIECES = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+|[^A-Za-z0-9]+")
_VOWEL = re.compile(r"[aeiouy]", re.IGNORECASE)


# Capitals and digits alternating again and again: a hex or base32 token in capitals
# (4A7B9C2D1E0F...), not an acronym with a number (SSECustomerKeyMD5, ISO8601, H264).
_CAPS_AND_DIGITS = re.compile(r"(?:[A-Z]+[0-9]+|[0-9]+[A-Z]+){4}")


def _made_of_words(value: str) -> bool:
    """An identifier made of words, acronyms and short numbers, as names are and tokens are not
    (a random token soon holds a lowercase run without a vowel, a long capital run, or capitals
    and digits in turn)."""
    if _CAPS_AND_DIGITS.search(value):
        return False
    pieces = _PIECES.findall(value)
    for i, piece in enumerate(pieces):
        if piece.isdigit():
            if len(piece) > 4:
                return False
        elif piece.isupper():
            if len(piece) > 6:
                return False
        elif piece.isalpha():
            versioned = len(piece) == 1 and i + 1 < len(pieces) and pieces[i + 1].isdigit()  # v2, p95
            if not versioned and (len(piece) < 2 or _VOWEL.search(piece) is None):
                return False
        elif piece not in ("_", ".", "-"):
            return False
    return True


def _token_value(value: str) -> bool:
    return (
        not _placeholder(value)
        and _TOKEN_CHARS.fullmatch(value) is not None
        and _token_like(value)
        and not _made_of_words(value)
    )


# A dotted import path (``IPython.core.magics.osm:OSMagics``): code, not a password.
_IMPORT_PATH = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+(?::[A-Za-z_]\w*)?")


# -- name = value ------------------------------------------------------------------------

_CRED = r"(?:pass|pwd|pw|secret|token|key|auth|cred|psk|(?-i:PAT))"
_CRED_WORDS = "pass|pwd|pw|secret|token|key|auth|cred|psk|pat"  # what a gate sees of them, folded
_CRED_FOLDED = f"(?:{_CRED_WORDS})"
# A quoted value is at most 1,000 characters: a rejected match is scanned again from its name's
# end (a value may hold the next name), which must not grow with the square of the text.
_VALUE = (
    r"""(?:"(?P<dq>[^"\n]{0,1000})"|'(?P<sq>[^'\n]{0,1000})'|`(?P<bq>[^`\n]{0,1000})`"""
    r"""|(?P<bare>[^\s"'`,;()\[\]{}<>\\]+))"""
)
_CRED_HINTS = ("pass", "pwd", "pw", "secret", "token", "key", "auth", "cred", "psk", "pat")

_NAMED = re.compile(
    rf"(?i)(?<![\w$.\-/\\])(?P<name>(?=[\w$.\-]{{0,80}}?{_CRED})[A-Za-z_$@][\w$.\-]{{0,100}}+)[\"'\]]*"
    r"(?:\s*:\s*[A-Za-z_][\w.\[\]| ]*?(?=\s*=))?"  # a type annotation: password: str = ...
    rf"\s*(?P<sep>:=|=>|=(?!=)|:)\s*{_VALUE}"
)


def _value_span(m: re.Match[str]) -> tuple[str, int, int]:
    group = next(g for g in ("dq", "sq", "bq", "bare") if g in m.re.groupindex and m.group(g) is not None)
    return group, *m.span(group)


def _literal_syntax(text: str, m: re.Match[str], start: int, end: int) -> bool:
    """Whether the syntax around a bare ``name = value`` makes the value a literal: an
    environment variable or property (``=`` without spaces, a capital in the name or a
    ``;`` after), a configuration line that holds nothing else (``password = x`` in an INI
    file, ``password: x`` in YAML), a properties line with a dotted name
    (``hibernate.connection.password = x``). ``obj.password = wrapper`` is Python."""
    name = m.group("name")
    between = text[m.end("name") : start]
    if between == "=" and (any(c.isupper() for c in name) or text[end : end + 1] == ";"):
        return True
    separator = between.strip(" \t\"'")
    if separator not in ("=", ":") or (separator == ":" and not between.endswith((" ", "\t"))):
        return False
    if name.count(".") >= 2 and name.islower():
        return True  # a properties file's line (spring.datasource.password = ...), wherever it is quoted
    if separator == "=" and "." in name and between.startswith(" "):
        return False
    return _alone_on_its_line(text, m.start(), end)


def _judge_named(m: re.Match[str], text: str) -> Finding | None:
    name = m.group("name")
    cls = credential_class(name)
    if cls is None:
        return None
    group, start, end = _value_span(m)
    value = text[start:end]
    if group == "bare":
        if m.group("sep") == ":" and not text[m.end("sep") : start]:
            return None  # "auth:client-a:task456": a label; YAML puts a blank after the colon
        if _code_after(text, end) or not _literal_value(text, value, end, quoted=False) and cls not in (
            "password", "pass"
        ):
            return None
        literal = _literal_syntax(text, m, start, end)
        if cls not in ("password", "pass") and not literal and re.fullmatch(r"[A-Za-z_]\w*", value):
            return None  # PrivateKey = Ed25519PrivateKey | ...: a name bound to another
        literal = literal and cls in ("password", "pass")
    else:
        if not _literal_value(text, value, end, quoted=True):
            return None
        literal = True
    return _finding(cls, name, start, end) if _value_ok(cls, value, literal=literal) else None


# ``<password>...</password>``, ``<Pass encoding="base64">...</Pass>``
_XML_ELEMENT = re.compile(
    r"<(?P<name>[A-Za-z_][\w.:\-]{0,60})(?:\s[^<>]{0,200})?>(?P<v>[^<>\s]{1,2000})</(?P=name)\s*>"
)
# ``<add key="WarehousePassword" value="..."/>``, ``<property name="password" value="..."/>``
_XML_PAIR = re.compile(
    r"""(?i)\b(?:key|name)\s*=\s*(?P<q>["'])(?P<name>[^"'<>\s]{1,120})(?P=q)\s+value\s*=\s*(?P<q2>["'])"""
    r"""(?P<v>[^"'<>\n]{1,2000})(?P=q2)"""
)
# ``<entry key="db.password">...</entry>``
_XML_ENTRY = re.compile(r"""(?i)\bkey\s*=\s*(?P<q>["'])(?P<name>[^"'<>\s]{1,120})(?P=q)\s*>(?P<v>[^<>\s]{1,2000})<""")
# ``spark.conf.set("fs.azure.account.key.acct.dfs.core.windows.net", "...")``, ``.option("password", "...")``
_CALL_PAIR = re.compile(
    r"""\(\s*(?P<q>["'])(?P<name>[^"'\s()]{1,160})(?P=q)\s*,\s*[rbuRBU]?(?P<q2>["'])(?P<v>[^"'\n]{1,2000})(?P=q2)\s*\)"""
)


def _judge_pair(m: re.Match[str], text: str) -> Finding | None:
    """A name and a value that a syntax pairs, the value a literal (quoted or XML text)."""
    name = m.group("name")
    cls = credential_class(name)
    if cls is None:
        return None
    start, end = m.span("v")
    value = text[start:end]
    if any(c.isspace() for c in value) or not _value_ok(cls, value, literal=True):
        return None
    if m.re is _CALL_PAIR and cls in ("password", "pass") and re.fullmatch(r"[A-Za-z_]+", value):
        return None  # .option("password", "pwd_column"): a column list, not a password
    return _finding(cls, name, start, end)


# A name, blanks, its value, and nothing else on the line: Groovy and Gradle's ``storePassword 'pw'``,
# redis.conf's ``requirepass pw``, csh's ``setenv DB_PASSWORD pw``, a Dockerfile's ``ENV DB_PASSWORD pw``,
# Tcl's ``set password "pw"``, nginx's ``proxy_set_header X-Api-Key "..."``; also after ``{`` or ``;``
# (``credentials { username 'u'; password 'pw' }``).
_SPACED = re.compile(
    r"(?m)(?:^|[{;]|(?<=[\s:=(\[{,])[\"'`])[ \t]*(?P<kw>(?:setenv|SetEnv|ENV|env|set|export|fastcgi_param|uwsgi_param|proxy_set_header"
    r"|add_header|more_set_headers|RequestHeader[ \t]+set)[ \t]+)?"
    r"(?P<name>[A-Za-z_][\w.\-]{0,80})[ \t]+"
    r"(?:\"(?P<dq>[^\"\n]{1,400})\"|'(?P<sq>[^'\n]{1,400})'|(?P<bare>[^\s\"'`;{}=:][^\s\"'`;{}]{0,400}))"
    r"[ \t]*[;}]*[ \t]*(?:(?:#|//)[^\n]*|[\"'`][ \t]*[,)}\]]*[ \t]*)?\r?$"  # the end of a line, or of a string
)
# Directives whose value is a password in any word (redis.conf, kickstart).
_PASSWORD_DIRECTIVES = frozenset("requirepass masterauth rootpw".split())


def _judge_spaced(m: re.Match[str], text: str) -> Finding | None:
    name = m.group("name")
    cls = "password" if name.lower() in _PASSWORD_DIRECTIVES else credential_class(name)
    if cls is None or name.lower() == "pass":
        return None  # "Pass 'accept_downloads=True'", "; pass allow_insecure=True": English
    group, start, end = _value_span(m)
    value = text[start:end]
    literal = group != "bare" or m.group("kw") is not None or name.lower() in _PASSWORD_DIRECTIVES
    if group == "bare" and (_code_after(text, end) or value.lower() in ("string", "str", "bool", "int")):
        return None
    return _finding(cls, name, start, end) if _value_ok(cls, value, literal=literal) else None


# -- URLs ---------------------------------------------------------------------------------

_URL_PARAM = re.compile(r"(?i)[?&;](?P<name>[a-z][\w.\-]{0,40})=(?P<v>[^&#;?=\s'\"<>\\]{1,4000}={0,2})")
_URL_CRED = re.compile(r"(?i)(?:key|token|secret|sig|signature|code|auth|pass|pwd|passwd|password|appid)$")


def _judge_url_param(m: re.Match[str], text: str) -> Finding | None:
    name = m.group("name")
    parts = [p for p in _SPLIT.split(name) if p]
    start, end = m.span("v")
    value = text[start:end]
    cls = credential_class(name)
    if cls is None and parts and _URL_CRED.search(parts[-1]):
        cls = "key"  # ?key=, ?code=, ?sig=, &X-Goog-Signature=: in a URL's query, the credential itself
        if parts[-1].lower() == "code" and (len(parts) > 1 or len(value) < 32):
            return None  # an OAuth authorization code (short-lived, RFC 6749's examples); ?code= of a function key is long
    if cls is None:
        return None
    if cls in ("password", "pass"):
        return _finding(cls, name, start, end) if _word_password(value) else None
    return _finding(cls, name, start, end) if _token_value(value) else None


def _judge_token_segment(m: re.Match[str], text: str) -> Finding | None:
    start, end = m.span("v")
    return ("webhook-url", "a webhook URL with its token", start, end) if _token_like(
        max(text[start:end].split("/"), key=len)
    ) else None


# -- key material --------------------------------------------------------------------------

# base64, over lines as ``base64`` wraps it (76) or PEM does (64)
_B64_RUN = r"[A-Za-z0-9+/]{{{n},}}={{0,2}}(?:[ \t]*\n[ \t]*[A-Za-z0-9+/]{{16,}}={{0,2}})*"
_PRIVATE = re.compile(rf"BEGIN{_KEY_LABEL}")


def _b64_decode(value: str, limit: int | None = None) -> bytes:
    raw = re.sub(r"\s+", "", value)
    if limit is not None:
        raw = raw[:limit]
    raw = raw[: len(raw) // 4 * 4]
    try:
        return base64.b64decode(raw)
    except (binascii.Error, ValueError):
        return b""


def _b64_pem(value: str) -> bool:
    return _PRIVATE.search(_b64_decode(value, 200).decode("latin-1")) is not None


def _b64_json(value: str) -> bool:
    decoded = _b64_decode(value)
    return any(s in decoded for s in (b'"private_key"', b"PRIVATE KEY", b'"client_secret"', b'"refresh_token"'))


def _der_length(data: bytes, i: int) -> int | None:
    """Where a DER length at ``data[i]`` ends, or None."""
    if i >= len(data):
        return None
    first = data[i]
    if first < 0x80:
        return i + 1
    n = first & 0x7F
    return i + 1 + n if 1 <= n <= 3 else None


def _der_private(value: str) -> bool:
    """A private key's DER: a SEQUENCE whose first element is the version INTEGER 0 or 1
    (PKCS#8, PKCS#1, SEC1; 3 is a PKCS#12 file), then an algorithm, an INTEGER or an OCTET
    STRING. Certificates and public keys start with a SEQUENCE inside, never a version."""
    data = _b64_decode(value, 64)
    if len(data) < 8 or data[0] != 0x30:
        return False
    i = _der_length(data, 1)
    if i is None or i + 3 >= len(data) or data[i : i + 2] != b"\x02\x01" or data[i + 2] not in (0, 1, 3):
        return False
    return data[i + 3] in (0x30, 0x02, 0x04)


# -- the rules ------------------------------------------------------------------------------


def _r(kind: str, label: str, pattern: str | re.Pattern[str], *hints: str, **kw: object) -> Rule:
    compiled = pattern if isinstance(pattern, re.Pattern) else re.compile(pattern)
    return Rule(kind, label, compiled, tuple(hints), **kw)  # type: ignore[arg-type]


def _g(regex: str) -> re.Pattern[str]:
    return re.compile(regex)


_KEY = "private-key", "a private key"
_HOOK = "webhook-url", "a webhook URL with its token"

GENERIC: list[Rule] = [
    # -- key material without armour
    _r(*_KEY, rf"(?<![A-Za-z0-9+/])LS0tLS1CRUdJTi{_B64_RUN.format(n=8)}", "LS0tLS1CRUdJTi", check=_b64_pem),
    _r(*_KEY, rf"(?<![A-Za-z0-9+/])(?:ewog|ewo|eyJ|eyAi){_B64_RUN.format(n=60)}", "ewo", "eyJ", "eyAi",
       check=_b64_json),
    _r(*_KEY, rf"(?<![A-Za-z0-9+/])(?:MII|MIG|MHc|MC4C|MD4C|MFMC|MFEC){_B64_RUN.format(n=57)}",
       "MII", "MIG", "MHc", "MC4C", "MD4C", "MFMC", "MFEC", check=_der_private),
    _r(*_KEY, rf"(?<![A-Za-z0-9+/])b3BlbnNzaC1rZXktdjE{_B64_RUN.format(n=20)}", "b3BlbnNzaC1rZXktdjE"),
    _r(*_KEY, r"""(?P<q>["'])(?:d|p|q|dp|dq|qi|k)(?P=q)\s*:\s*(?P<q2>["'])(?P<v>[A-Za-z0-9_-]{16,})(?P=q2)""", "kty",
       inner=True, judge=lambda m, t: (*_KEY, *m.span("v")) if "kty" in t else None),
    # -- webhook URLs: the path is the token
    _r(*_HOOK, r"hooks\.zapier\.com/hooks/catch/(?P<v>\d+/[A-Za-z0-9]+)", "hooks.zapier.com", inner=True, token=False,
       group="v"),
    _r(*_HOOK, r"maker\.ifttt\.com/(?:trigger/[^/\s]+/(?:json/)?with/key|use)/(?P<v>[\w-]{10,})", "maker.ifttt.com",
       inner=True, group="v"),
    _r(*_HOOK, r"webexapis\.com/v1/webhooks/incoming/(?P<v>[\w-]{20,})", "webexapis.com", inner=True, group="v"),
    _r(*_HOOK, r"(?i)\banaconda\.(?:org|com|cloud)/t/(?P<v>[\w-]{16,})", "anaconda.", inner=True, folded=True,
       group="v"),
    _r(*_HOOK, r"(?i)https?://[\w.\-:@]+/(?:[\w.\-]+/){0,6}?(?:web-?)?hooks?/(?:incoming/)?"
       r"(?P<v>[A-Za-z0-9_@-]{16,}(?:/[A-Za-z0-9_@-]{16,}|/[A-Za-z]+(?=/[A-Za-z0-9_@-]{16,})){0,4})", "hook",
       inner=True, folded=True,
       judge=_judge_token_segment),
    # a token written as a URL's user: https://<token>@dev.azure.com/...
    _r("token", "a token", r"(?<![\w+.-])https?://(?P<v>[A-Za-z0-9_~.\-]{24,})@[\w.\-]",
       "://", inner=True, group="v", check=_token_like),
    # -- a URL's query: ?key=, ?code=, &X-Goog-Signature=
    _r("api-key", "an API key or secret key", _URL_PARAM, *_CRED_HINTS, "sig", "code", "appid", folded=True,
       token=False, gate=_g(rf"[?&;][\w.\-]{{0,30}}(?:{_CRED_WORDS}|sig|code|appid)[\w.\-]{{0,20}}="),
       judge=_judge_url_param),
    # -- a credential-bearing name and its value, in each syntax
    _r("password", "a password", _XML_ELEMENT, "</", token=False,
       gate=_g(r"</[\w.:\-]*" + _CRED_FOLDED), judge=_judge_pair),
    _r("password", "a password", _XML_PAIR, "value", folded=True, token=False,
       gate=_g(r"(?:key|name)\s*=\s*[\"'][^\"'<>\s]{0,120}?" + _CRED_FOLDED), judge=_judge_pair),
    _r("password", "a password", _XML_ENTRY, "key", folded=True, token=False,
       gate=_g(r"key\s*=\s*[\"'][^\"'<>\s]{0,120}?" + _CRED_FOLDED), judge=_judge_pair),
    _r("password", "a password", _CALL_PAIR, *_CRED_HINTS, folded=True, token=False,
       gate=_g(r"[\"'][^\"'\s()]{0,160}?" + _CRED_FOLDED + r"[^\"'\s()]{0,160}[\"']\s*,\s*[rbu]?[\"']"),
       judge=_judge_pair),
    _r("password", "a password", _NAMED, *_CRED_HINTS, folded=True, token=False,
       gate=_g(_CRED_FOLDED + r"[\w$.\-]{0,100}[\"'\]]*\s*[:=]"), judge=_judge_named),
    _r("password", "a password", _SPACED, *_CRED_HINTS, folded=True, token=False,
       gate=_g(_CRED_FOLDED + r"[\w.\-]{0,80}[ \t]+[^\s=:]"), judge=_judge_spaced),
]
