"""Secrets handed to code and carried by HTTP: calls, connection strings, headers, cookies.

Part of the generic layer (``secret_generic`` reads names and values, ``secret_commands``
command lines). Here a credential is told by the call or header that carries it:

* ``auth=('u', 'pw')``, ``HTTPBasicAuth('u', 'pw')``, ``.login('u', 'pw')``;
* a constructor or setter whose name bears a credential, given literals only:
  ``NetworkCredential("u", "pw")``, ``PlainCredentials('guest', 'pw')``,
  ``AzureKeyCredential("<key>")``, ``keyring.set_password("svc", "u", "pw")`` (not a getter:
  ``keyring.get_password("svc", "u")`` names a user);
* ODBC's braced ``PWD={...}``;
* an ``Authorization`` header of any scheme (``GenieKey``, ``SSWS``, ``Token``) with a
  token after it;
* cookies that carry a session: ``Cookie: sessionid=...``, ``curl -b 'sid=...'``,
  ``cookies={"sessionid": "..."}``, ``document.cookie = "..."`` (a tracking cookie's id,
  ``_ga=GA1.2.123.456``, is no credential and reads as words and numbers).
"""

from __future__ import annotations

import re

from .secret_generic import _finding, _token_value, credential_class
from .secret_rules import _SYMBOL, Rule, _placeholder, _random_looking, _token_like, _word_password

Finding = tuple[str, str, int, int]

# ``auth=('u', 'pw')``, ``HTTPBasicAuth("u", "pw")``, ``smtp.login("u", "pw")``
_AUTH_CALL = re.compile(
    r"(?:\bauth\s*=\s*[(\[]|\b(?:HTTPBasicAuth|HTTPDigestAuth|HTTPProxyAuth|BasicAuth|DigestAuth|BasicAuthentication)"
    r"\(|\.(?:login|simple_bind_s|simple_bind|bind_s)\()\s*[rbu]?(?P<q>[\"'])[^\"'\n]{1,200}(?P=q)\s*,\s*[rbu]?"
    r"(?P<q2>[\"'])(?P<v>[^\"'\n]{1,200})(?P=q2)"
)
# ODBC's braced value: ``PWD={p;w}``
_BRACED = re.compile(r"(?im)(?:^|;)[ \t]*(?:pwd|password)[ \t]*=[ \t]*\{(?P<v>[^}\n]{1,200})\}[ \t]*(?=;|\"|'|$)")


def _judge_word(m: re.Match[str], text: str) -> Finding | None:
    start, end = m.span("v")
    value = text[start:end]
    if any(c.isspace() for c in value) or _placeholder(value) or len(value) < 4:
        return None
    return ("password", "a password", start, end) if _word_password(value) or _random_looking(value) else None


# -- constructors and setters ---------------------------------------------------------------

_LITERAL = r"""[rbuRBUN@$]?(?:"[^"\n]{0,400}"|'[^'\n]{0,400}')(?:\.toCharArray\(\))?"""
# A call whose arguments are literals only (one to four), its callee a name that bears a credential.
_CREDENTIAL_CALL = re.compile(
    r"(?<![\w.])(?:new[ \t]+)?(?P<callee>[A-Za-z_][\w.]{0,100}?(?:credentials?|auth|authentication|securestring"
    r"|password|passwd|secret|secretstr|key|token))(?:::new)?[ \t]*\([ \t]*"
    rf"(?P<args>{_LITERAL}(?:[ \t]*,[ \t]*{_LITERAL}){{0,3}})[ \t]*,?[ \t]*\)",
    re.IGNORECASE,
)
_QUOTED = re.compile(r"""(?P<q>["'])(?P<v>[^"'\n]*)(?P=q)""")
# The verbs of calls that read, check or transform a credential, never give one.
_NOT_GIVING = frozenset(
    """get read load fetch find lookup look check verify validate hash has is delete remove del prompt ask input
    reset clear encode decode mask redact generate gen make compare match parse format print log show test require
    requires needs with use count strip split normalize sanitize assert expect describe list rotate revoke
    invalidate refresh create new build issue sign unsign request exchange introspect store_hash to from""".split()
)
_CALLEE_PARTS = re.compile(r"[_.]+|(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def _judge_credential_call(m: re.Match[str], text: str) -> list[Finding]:
    callee = m.group("callee").rpartition(".")[2]
    parts = [p.lower() for p in _CALLEE_PARTS.split(callee) if p]
    cls = credential_class(callee)
    if cls is None or not parts or parts[0] in _NOT_GIVING:
        return []
    base = m.start("args")
    args = [(q.group("v"), base + q.start("v"), base + q.end("v")) for q in _QUOTED.finditer(m.group("args"))]
    # Where the password stands: last in a setter (set_password(service, user, pw)), second in a
    # credential (NetworkCredential(user, pw, domain), basic_auth(user, pw)); a token anywhere
    # but first of several (the first is whom or what it is for: a user, an account, a tenant).
    where = len(args) - 1 if cls in ("password", "pass") else 1
    found: list[Finding] = []
    for i, (value, start, end) in enumerate(args):
        if len(args) > 1 and i == 0:
            continue
        if _token_value(value):
            found.append(_finding(cls if cls not in ("password", "pass") else "secret", callee, start, end))
        elif cls in ("password", "pass", "credential", "auth") and i == where and _word_password(value) and (
            " " not in value and (len(args) > 1 or _random_looking(value) or _SYMBOL.search(value))
        ):
            found.append(("password", "a password", start, end))
    return found


# -- headers and cookies --------------------------------------------------------------------

# ``Authorization: GenieKey <token>``: any scheme; Basic, Bearer and the token schemes have rules of their own.
_AUTH_HEADER = re.compile(
    r"(?i)\b(?:proxy-)?authorization[\"']?\s*[:=]\s*[\"']?(?:[A-Za-z][\w.\-]{0,40}[ \t]+)?"
    r"(?P<v>[A-Za-z0-9._~+/=\-]{16,})"
)


def _judge_auth_header(m: re.Match[str], text: str) -> Finding | None:
    start, end = m.span("v")
    value = text[start:end]
    return ("auth-header", "an HTTP authorization credential", start, end) if _token_like(value) and not _placeholder(
        value
    ) else None


# Where cookies are written: a Cookie or Set-Cookie header, curl's -b/--cookie, document.cookie,
# and a cookies mapping (``cookies={...}``, ``cookies = dict(...)``).
_COOKIE = re.compile(
    r"(?i)(?:\b(?:set-)?cookie[\"']?\s*[:=]\s*[\"']?|(?<![\w-])(?:-b|--cookie)(?:[ \t]+|=)[\"']?"
    r"|\bdocument\.cookie\s*=\s*[\"'`]|\bcookies\s*=\s*(?:\{|dict\())(?P<v>[^\n}]{3,2000})"
)
# A cookie pair: name=value (headers, curl) or "name": "value" (a mapping).
_COOKIE_PAIR = re.compile(
    r"""(?:(?<=[\s;"'{(,])|^)(?P<name>[\w.\-]{1,80})=(?P<v>[^;\s"',]{1,1000})"""
    r"""|(?P<q>["'])(?P<qname>[\w.\-]{1,80})(?P=q)\s*:\s*(?P<q2>["'])(?P<qv>[^"'\n]{1,1000})(?P=q2)"""
)
# Names of the cookies that hold a session or a login (sessionid, PHPSESSID, connect.sid, _gh_sess,
# __Secure-next-auth.session-token, remember_user_token, laravel_session, .AspNetCore.Cookies).
_SESSION_NAME = re.compile(r"(?i)sess|(?:^|[_.\-])sid$|^sid|auth|token|jwt|remember|login|identity|\.aspnet|cookies$")


def _judge_cookies(m: re.Match[str], text: str) -> list[Finding]:
    base = m.start("v")
    found: list[Finding] = []
    for pair in _COOKIE_PAIR.finditer(m.group("v")):
        group = "v" if pair.group("v") is not None else "qv"
        name = pair.group("name") if group == "v" else pair.group("qname")
        value = pair.group(group)
        if (_SESSION_NAME.search(name) or credential_class(name)) and _token_value(value):
            found.append(("session-cookie", "a session cookie", base + pair.start(group), base + pair.end(group)))
    return found


def _r(kind: str, label: str, pattern: re.Pattern[str], *hints: str, **kw: object) -> Rule:
    return Rule(kind, label, pattern, tuple(hints), **kw)  # type: ignore[arg-type]


CALLS: list[Rule] = [
    _r("password", "a password", _AUTH_CALL, "auth", "Auth", "login", "bind", token=False, judge=_judge_word),
    _r("password", "a password", _BRACED, "pwd", "password", folded=True, token=False,
       gate=re.compile(r"(?:pwd|password)\s*=\s*\{"), judge=_judge_word),
    _r("password", "a password", _CREDENTIAL_CALL, "cred", "auth", "securestring", "pass", "pwd", "secret", "key",
       "token", folded=True, token=False,
       gate=re.compile(r"(?:cred\w*|auth\w*|securestring|pass\w*|secret\w*|key|token)(?:::new)?[ \t]*\([ \t]*[rbun@$]?[\"']"),
       judge=_judge_credential_call),
    _r("auth-header", "an HTTP authorization credential", _AUTH_HEADER, "authorization", folded=True,
       judge=_judge_auth_header),
    _r("session-cookie", "a session cookie", _COOKIE, "cookie", "-b", folded=True, token=False,
       gate=re.compile(r"cookie|-b[ \t=]"), judge=_judge_cookies),
]
