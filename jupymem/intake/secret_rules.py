"""The shapes of secrets: what a credential's value looks like, and one rule per shape.

``secrets_scan`` runs these; they live apart because the table is long and grows with
every token format a provider invents (the formats gitleaks' rule set documents,
``config/gitleaks.toml``, plus the ways people write credentials in notebooks), while
the scan that uses them changes rarely. Each ``Rule`` carries *hints*: literal
fragments one of which every match contains, so a scan runs only the rules whose hints
occur (see ``secrets_scan``).

Stdlib only, regexes compiled at import.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

# What case folding in ``re.IGNORECASE`` makes equal to ASCII letters.
_FOLD = str.maketrans({"ſ": "s", "\u212a": "k", "ı": "i", "İ": "i"})

# -- what a value looks like ------------------------------------------------------


def _random_looking(value: str) -> bool:
    """Mixed letters and digits, as keys and tokens are; words and names are not."""
    has_digit = any(c.isdigit() for c in value)
    has_alpha = any(c.isalpha() for c in value)
    return has_digit and has_alpha


def _both_cases(value: str) -> bool:
    return any(c.islower() for c in value) and any(c.isupper() for c in value)


def _mixed(value: str) -> bool:
    """Random-looking, or letters of both cases (some tokens hold no digit)."""
    return _random_looking(value) or _both_cases(value)


def _entropy(value: str) -> float:
    """Shannon entropy in bits per character (gitleaks gates its rules on it too)."""
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in Counter(value).values()) if n else 0.0


_CAMEL = re.compile(r"[A-Z]?[a-z]+(?:[A-Z][a-z]+)*[0-9]{0,4}|[A-Z]+[0-9]{0,4}")


def _wordish(part: str) -> bool:
    """A piece of an identifier: a word, a number, a short code, a camelCase name."""
    return len(part) <= 4 or part.isdigit() or _CAMEL.fullmatch(part) is not None


def _token_like(value: str, min_len: int = 16) -> bool:
    """A credential rather than an identifier, a path or a hash-free label.

    ``dt_2024_01_01_v3`` and ``customerLifetimeValue2`` are names: every piece is a
    word, a number or a short code. A token has a long piece that is none of those,
    mixes letters and digits (or both cases), and is not repetitive.
    """
    if len(value) < min_len or value[0] in "/~." or "://" in value:
        return False
    if all(_wordish(p) for p in re.split(r"[_\-.:/]", value)):
        return False
    letters = any(c.isalpha() for c in value)
    digits = any(c.isdigit() for c in value)
    cases = any(c.islower() for c in value) and any(c.isupper() for c in value)
    return letters and (digits or cases) and _entropy(value) >= 3.0


def _keyish(value: str) -> bool:
    """A prefixed key's body: letters and digits, or random letters of both cases."""
    return _random_looking(value) or _token_like(value)


# What a value looks like when it stands in for a secret instead of being one.
_PLACEHOLDER = re.compile(
    r"""^(?:
        \$\{[^}]*\}|\#\{[^}]*\}\#?|__[A-Za-z_]\w*__|\$\(?[A-Za-z_]\w*\)?|%\(?\w*\)?s|%[A-Za-z_]\w*%|\{\{?[^}]*\}\}?
      | <[^>]*>|\[[^\]]*\]
      | [*x.•…#?-]{3,}|x+|X+
      | (?:your|my|the|some|example|sample|dummy|fake|placeholder)?[_ -]?
        (?:(?:api|access|auth|bearer|client|app|private|personal|account|service|db)[_ -]?)?
        (?:password|passwd|pass|pwd|secret|token|key|value|here|xxx+)
        (?:[_ -]?here|[_-]?\d{1,3})?
      | changeme|changeit|redacted|none|null|nil|true|false|undefined|env|getpass
      | empty|blank|unset|required|optional|todo|tbd|prompt|stdin|default
    )$""",
    re.IGNORECASE | re.VERBOSE,
)


def _placeholder(value: str) -> bool:
    v = value.strip()
    return not v or bool(_PLACEHOLDER.match(v)) or "REDACTED" in v.upper()


def _code_after(text: str, end: int) -> bool:
    """A call, subscript or attribute follows: code, not a value (a full stop is fine,
    also at the end of a quoted sentence)."""
    after = text[end : end + 2]
    return after[:1] in ("(", "[") or (after[:1] == "." and (after[1:2].isalpha() or after[1:2] == "_"))


# A token behind a short prefix and a dot: Vault's legacy s.<24> and b.<...>.
_SHORT_PREFIX_TOKEN = re.compile(r"[a-z]{1,3}\.(?=[A-Za-z0-9]*[0-9])(?=[A-Za-z0-9]*[A-Z])[A-Za-z0-9]{20,}")


def _literal_value(text: str, value: str, end: int, quoted: bool) -> bool:
    """True when an assigned value is a literal secret, not code or a stand-in."""
    if len(value) < 4 or _placeholder(value):
        return False
    if quoted:
        # A quoted sentence or a file name is not a credential.
        return not any(c.isspace() for c in value) and not re.fullmatch(
            r"[\w./~\\-]+\.(?:json|ya?ml|txt|cfg|ini|env|pem|key|toml|csv)|[./~].*", value
        )
    if _code_after(text, end):
        return False
    if re.fullmatch(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+", value) and not _SHORT_PREFIX_TOKEN.fullmatch(value):
        return False  # dotted name: settings.token, os.environ (a legacy Vault token, s.<24>, is none)
    if value[0] in "/~":
        return False  # a path
    return len(value) >= 6 and _random_looking(value)


# Words that stand where a password would in ordinary statements and configuration
# ("the password is required", "password: str", "PASSWORD=vault"): never taken for one.
_NOT_PASSWORDS = frozenset(
    """a an the in on at to from with for by of and or but not no yes off is it its this that there here
    also still now then only always never same different unknown known set unset reset changed unchanged
    required optional mandatory needed wrong correct incorrect right invalid valid expired expiring missing weak strong
    long short secure insecure sensitive case ok fine good bad new old stored rotated shared private public
    personal temporary random unique generated provided given attached below above hidden masked encrypted
    hashed salted managed handled kept sent visible ignored used saved cached logged printed hardcoded
    embedded included excluded enabled disabled locked blocked active inactive compromised leaked exposed
    available unavailable blank empty default standard usual simple complex trivial obvious easy hard ready
    pending outdated stale fresh current previous next last first one two all any some each every mine yours
    ours theirs what which where when why how who whatever something nothing anything everything vault
    keyring keychain 1password lastpass bitwarden env environment variable variables file prompt input
    interactive ask sso ldap kerberos oauth saml iam okta str string text varchar char bytes bytea int
    integer bool boolean object secretstr plain plaintext cleartext md5 sha1 sha256 bcrypt scrypt argon2
    pbkdf2 scram trust peer ident auto inherit too very really attribute property method function field column
    parameter argument omit""".split()
)
# An identifier that names a secret is a variable holding one (``password=db_password``).
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")
_SNAKE = re.compile(r"[a-z]+(?:_[a-z]+)+")


def _word_password(value: str) -> bool:
    """Any value but a stand-in, a name or a common word: used where the syntax around a
    value says it is a password (``PGPASSWORD=marmalade``, ``;Password=marmalade;``,
    ``machine h login u password marmalade``), so it needs no digit."""
    if len(value) < 4 or _placeholder(value) or value[0] in "/~$%{<[!":
        return False
    if value.lower() in _NOT_PASSWORDS or _SNAKE.fullmatch(value):
        return False  # a word, or a variable: password = user_input
    return not (_IDENTIFIER.fullmatch(value) and ("." in value or _names_a_secret(value)))


# The parts of an identifier (``db_password``, ``dbPassword``, ``PGPASSWORD``); a word that only
# holds one inside (``bluemonkeyseven``, ``S3cr3tPassw0rd``) names nothing.
_PARTS = re.compile(r"[_.]+|(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_SECRET_PARTS = frozenset(
    "pass password passwd pwd pw secret token key cred creds credential credentials auth psk".split()
)


def _names_a_secret(value: str) -> bool:
    """Whether an identifier is a variable named for a secret: a part of it is the word."""
    for part in _PARTS.split(value):
        low = part.lower()
        if low in _SECRET_PARTS or low.endswith(("password", "passwd", "token", "secret", "apikey")):
            return True
    return False


def _alone_on_its_line(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` is all that its line holds, but indentation, a YAML
    list's dash, ``export``, a comment after it, and the quotes and brackets of a
    string literal or a repr around it."""
    before = text[max(0, start - 200) : start].rpartition("\n")[2].strip(" \t-'\"`")
    after = text[end : end + 200].partition("\n")[0].strip(" \t'\"`,)]}")
    return before in ("", "export") and (not after or after[0] in "#;")


def _label_for(name: str) -> tuple[str, str]:
    """The kind and label of a secret given to ``name``."""
    low = name.lower()
    if "pass" in low or "pw" in low:
        return "password", "a password"
    if "token" in low:
        return "token", "a token"
    if "key" in low:
        return "api-key", "an API key or secret key"
    return "secret", "a secret"


# The end of a clause: what may follow a password that a sentence ends with.
_CLAUSE_END = re.compile(r"[ \t]*(?:[.,;:!?)\]\"'`]|\n|\Z)")
_ENGLISH_SUFFIX = re.compile(
    r"(?:ed|ing|able|ible|ive|ous|ful|less|al|ent|ant|ic|ly|ness|ment|tion|sion|ary|ory|ise|ize)$"
)
_SYMBOL = re.compile(r"[!@#$%^&*+=?~]")


def _prose_password(text: str, value: str, end: int) -> bool:
    """A password that a sentence ends with ("the password is marmalade.").

    Only at the end of a clause ("the password is rotated by ..." goes on), and only
    when the value does not read as English: digits (six or more), a symbol, three or
    more hyphenated words (a passphrase), or a word without an English ending.
    """
    if not _CLAUSE_END.match(text, end) or not _word_password(value):
        return False
    if value.isdigit():
        return len(value) >= 6
    if _SYMBOL.search(value) or value.count("-") >= 2:
        return True
    return value.isalpha() and not _ENGLISH_SUFFIX.search(value.lower())


def _decodes_to_digits(value: str) -> bool:
    """A Discord bot token's first part: a user id (digits) in base64 without padding."""
    try:
        return base64.b64decode(value + "=" * (-len(value) % 4), validate=True).isdigit()
    except (binascii.Error, ValueError):
        return False


# -- the rules ----------------------------------------------------------------------


Finding = tuple[str, str, int, int]  # kind, label, start, end


@dataclass(frozen=True)
class Rule:
    """One shape of secret.

    ``hints``: fragments one of which every match contains, compared with the text
    as it is (``folded=False``) or lowercased (``folded=True``, for rules that
    ignore case). Unless ``inner``, each hint is where a match starts, at the start
    of a word (the pattern begins with ``\b`` and the hint). ``token``: every match
    holds a run of 16 token characters, so the rule is skipped for text that has none. ``group``: the part that is secret
    (the whole match when None); ``check``: a last look at that part. ``gate``: a regex that every match needs,
    searched in the folded text once a hint occurs (for hints too common alone: "key", "pass").
    ``judge``: in place of ``group`` and ``check``, looks at the match and its text and returns
    ``(kind, label, start, end)``, a list of them (a command line may give several), or None
    (the generic layer's names decide what kind a value is).
    """

    kind: str
    label: str
    pattern: re.Pattern[str]
    hints: tuple[str, ...]
    folded: bool = False
    token: bool = True
    inner: bool = False
    group: str | None = None
    check: Callable[[str], bool] | None = None
    gate: re.Pattern[str] | None = None
    judge: Callable[[re.Match[str], str], Finding | list[Finding] | None] | None = None


def _rule(kind: str, label: str, regex: str, *hints: str, **kw: object) -> Rule:
    return Rule(kind, label, re.compile(regex), tuple(hints), **kw)  # type: ignore[arg-type]


# The end of a token: not followed by more token characters.
_END = r"(?![A-Za-z0-9_-])"
_PEM_BODY = re.compile(r"[A-Za-z0-9+/=]{16,}")
# A key block's armor line: PEM and PGP write five dashes, the SSH2 (SecSH) format four and a space.
_ARMOR = r"(?:-----|---- )"
_ARMOR_END = r"(?:-----| ----)"
_KEY_LABEL = r"[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?"


def _key_material(block: str) -> bool:
    """Key material, not prose that names the format: a long unbroken base64 run."""
    return _PEM_BODY.search(re.sub(r"-{4,5} ?[A-Z][^-]*-{4,5}", "", block)) is not None


# Specific shapes first: when two rules match the same characters the earlier wins.
_TOKENS: list[Rule] = [
    # -- private keys and key files
    _rule(
        "private-key", "a private key",
        rf"{_ARMOR}BEGIN{_KEY_LABEL}{_ARMOR_END}[\s\S]*?(?:{_ARMOR}END{_KEY_LABEL}{_ARMOR_END}|\Z)",
        "BEGIN", inner=True, check=_key_material,
    ),
    _rule(
        # The private lines of a .ppk file (v2 and v3) and its MAC; the public lines before them are
        # taken too, as a key file is one thing. What lies between a header and its private lines
        # never crosses another header, so text of many headers and no key is read once.
        "putty-key", "a PuTTY private key",
        r"PuTTY-User-Key-File-\d: ?[\w@.-]{1,40}(?:(?!PuTTY-User-Key-File-|Private-Lines:)[\s\S]){0,4000}"
        r"Private-Lines: ?\d+"
        r"(?:\s+[A-Za-z0-9+/=]{1,128}(?![A-Za-z0-9+/=:-]))+(?:\s+Private-(?:MAC|Hash): ?[0-9a-fA-F]+)?",
        "PuTTY-User-Key-File-", inner=True, check=_key_material,
    ),
    _rule("age-secret-key", "an age secret key", r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}",
          "AGE-SECRET-KEY-1", inner=True),
    _rule("jwt", "a JSON Web Token", r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}", "eyJ"),
    # -- clouds
    _rule("aws-access-key", "an AWS access key", r"\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b",
          "AKIA", "ASIA", "ABIA", "ACCA", "A3T"),
    _rule("aws-session-token", "an AWS session token", r"\b(?:IQoJb3JpZ2luX2V|FwoGZXIvYXdzE)[A-Za-z0-9/+=]{100,}",
          "IQoJb3JpZ2luX2V", "FwoGZXIvYXdzE"),
    _rule("aws-bedrock-key", "an Amazon Bedrock API key", r"\bABSK[A-Za-z0-9+/]{109,269}={0,2}", "ABSK"),
    _rule("azure-client-secret", "an Azure AD client secret",
          r"(?<![A-Za-z0-9_~.])[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.-]{31,34}(?![A-Za-z0-9_~.-])", "Q~", inner=True),
    _rule("azure-storage-key", "an Azure storage account key", r"(?i)\bAccountKey=(?P<v>[A-Za-z0-9+/]{80,}={0,2})",
          "accountkey=", folded=True, group="v"),
    _rule("azure-shared-access-key", "an Azure shared access key",
          r"(?i)\bSharedAccessKey=(?P<v>[A-Za-z0-9+/]{40,}={0,2})", "sharedaccesskey=", folded=True, group="v"),
    _rule("azure-sas-token", "an Azure shared access signature", r"(?i)[?&;]sig=(?P<v>[A-Za-z0-9%+/=]{30,})",
          "sig=", folded=True, group="v"),
    # A presigned URL's signature lets whoever holds the link read or write the object until it
    # expires: Google Cloud Storage's V4 and V2 signatures, S3's SigV4 (its key id is a rule above).
    _rule("signed-url", "a signed URL's signature",
          r"(?i)[?&](?:X-Goog-Signature|X-Amz-Signature|Signature)=(?P<v>[A-Za-z0-9%+/=_-]{40,})",
          "x-goog-signature=", "x-amz-signature=", "signature=", folded=True, group="v"),
    _rule("google-api-key", "a Google API key", r"\bAIza[0-9A-Za-z_-]{35}" + _END, "AIza"),
    _rule("google-oauth-secret", "a Google OAuth client secret", r"\bGOCSPX-[A-Za-z0-9_-]{28}" + _END, "GOCSPX-"),
    _rule("google-oauth-token", "a Google OAuth access token", r"\bya29\.[A-Za-z0-9_-]{30,}", "ya29."),
    _rule("google-refresh-token", "a Google OAuth refresh token", r"(?<![\w/])1//0[A-Za-z0-9_-]{40,}", "1//0"),
    _rule("alibaba-access-key", "an Alibaba Cloud access key", r"\bLTAI[A-Za-z0-9]{20}" + _END, "LTAI"),
    _rule("digitalocean-token", "a DigitalOcean token", r"\bdo[opr]_v1_[a-f0-9]{64}\b", "doo_v1_", "dop_v1_", "dor_v1_"),
    _rule("heroku-key", "a Heroku API key", r"\bHRKU-AA[0-9A-Za-z_-]{58}", "HRKU-"),
    _rule("cloudflare-origin-key", "a Cloudflare origin CA key", r"\bv1\.0-[a-f0-9]{24}-[a-f0-9]{146}", "v1.0-"),
    _rule("flyio-token", "a Fly.io token", r"\b(?:fo1_[\w-]{43}|fm[12][ar]?_[A-Za-z0-9+/]{100,}={0,3})",
          "fo1_", "fm1", "fm2"),
    _rule("vault-token", "a HashiCorp Vault token", r"\bhv[sb]\.[\w-]{90,300}", "hvs.", "hvb."),
    _rule("terraform-token", "a Terraform Cloud token", r"\b[a-z0-9]{14}\.atlasv1\.[a-z0-9_=-]{60,70}", ".atlasv1.", inner=True),
    # dapi: personal access tokens; dose: OAuth secrets of service principals
    _rule("databricks-token", "a Databricks token", r"\bd(?:api|ose)[a-f0-9]{32}(?:-\d)?\b", "dapi", "dose"),
    _rule("supabase-token", "a Supabase key", r"\bsbp_(?:v0_)?[a-f0-9]{40}\b|\bsb_secret_[A-Za-z0-9_-]{20,}",
          "sbp_", "sb_secret_"),
    _rule("gcp-service-account", "a Google Cloud service account key id",
          r"\"private_key_id\"\s*:\s*\"(?P<v>[a-f0-9]{40})\"", "\"private_key_id\"", inner=True, group="v"),
    _rule("onepassword-key", "a 1Password secret key",
          r"\bA3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}\b"
          r"|\bops_eyJ[A-Za-z0-9+/]{250,}={0,3}", "A3-", "ops_eyJ"),
    _rule("doppler-token", "a Doppler token", r"\bdp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,44}", "dp."),
    _rule("planetscale-token", "a PlanetScale token", r"\bpscale_(?:tkn|pw|oauth)_[\w=.-]{32,64}", "pscale_"),
    _rule("pulumi-token", "a Pulumi token", r"\bpul-[a-f0-9]{40}\b", "pul-"),
    _rule("scalingo-token", "a Scalingo token", r"\btk-us-[\w-]{48}", "tk-us-"),
    # -- code hosting and package registries
    _rule("github-token", "a GitHub token", r"\b(?:gh[pousr]_[A-Za-z0-9]{30,255}|github_pat_[A-Za-z0-9_]{22,255})\b",
          "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    _rule("gitlab-token", "a GitLab token",
          r"\bgl(?:pat|dt|ft|soat|rt|cbt|ffct|imt|agent|oas|ptt)-[0-9A-Za-z_-]{20,}(?:\.[0-9A-Za-z_-]+)*"
          r"|\bGR1348941[\w-]{20}",
          "glpat-", "gldt-", "glft-", "glsoat-", "glrt-", "glcbt-", "glffct-", "glimt-", "glagent-", "gloas-",
          "glptt-", "GR1348941"),
    _rule("atlassian-token", "an Atlassian API token", r"\bATATT3[A-Za-z0-9_=-]{150,}", "ATATT3"),
    _rule("npm-token", "an npm token", r"\bnpm_[A-Za-z0-9]{36}" + _END, "npm_"),
    _rule("pypi-token", "a PyPI token", r"\bpypi-AgE[A-Za-z0-9_-]{60,}", "pypi-AgE"),
    _rule("rubygems-token", "a RubyGems token", r"\brubygems_[a-f0-9]{48}\b", "rubygems_"),
    _rule("nuget-key", "a NuGet API key", r"\boy2[a-z0-9]{43}\b", "oy2"),
    _rule("clojars-token", "a Clojars token", r"(?i)\bCLOJARS_[a-z0-9]{60}", "clojars_", folded=True),
    _rule("dockerhub-token", "a Docker Hub token", r"\bdckr_(?:pat|oat)_[A-Za-z0-9_-]{27,}", "dckr_"),
    _rule("sourcegraph-token", "a Sourcegraph token", r"\bsgp_(?:[a-fA-F0-9]{16}_|local_)?[a-fA-F0-9]{40}\b", "sgp_"),
    _rule("readme-token", "a ReadMe API key", r"\brdme_[a-z0-9]{70}\b", "rdme_"),
    _rule("postman-token", "a Postman API key", r"\bPMAK-[a-fA-F0-9]{24}-[a-fA-F0-9]{34}\b", "PMAK-"),
    _rule("linear-token", "a Linear API key", r"\blin_api_[A-Za-z0-9]{40}\b", "lin_api_"),
    _rule("notion-token", "a Notion token", r"\bntn_\d{11}[A-Za-z0-9]{35}\b|\bsecret_[A-Za-z0-9]{43}\b",
          "ntn_", "secret_"),
    _rule("sentry-token", "a Sentry token", r"\bsntrys_eyJ[A-Za-z0-9+/=_]{50,}|\bsntryu_[a-f0-9]{64}\b", "sntry"),
    _rule("grafana-token", "a Grafana token",
          r"\bglc_[A-Za-z0-9+/]{32,400}={0,3}|\bglsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}\b|\beyJrIjoi[A-Za-z0-9]{70,400}={0,3}",
          "glc_", "glsa_", "eyJrIjoi"),
    _rule("newrelic-key", "a New Relic key", r"\bNR(?:AK-[A-Z0-9]{27}|II-[A-Za-z0-9-]{32}|JS-[a-f0-9]{19})\b",
          "NRAK-", "NRII-", "NRJS-"),
    _rule("dynatrace-token", "a Dynatrace token", r"\bdt0c01\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}\b", "dt0c01."),
    _rule("infracost-token", "an Infracost token", r"\bico-[A-Za-z0-9]{32}\b", "ico-"),
    _rule("octopus-key", "an Octopus Deploy API key", r"\bAPI-[A-Z0-9]{26}\b", "API-"),
    _rule("prefect-token", "a Prefect token", r"\bpnu_[A-Za-z0-9]{36}\b", "pnu_"),
    _rule("frameio-token", "a Frame.io token", r"\bfio-u-[A-Za-z0-9_=-]{64}", "fio-u-"),
    _rule("openshift-token", "an OpenShift token", r"\bsha256~[\w-]{43}" + _END, "sha256~"),
    _rule("harness-token", "a Harness token", r"\b(?:pat|sat)\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20}\b",
          "pat.", "sat."),
    _rule("airtable-token", "an Airtable token", r"\bpat[A-Za-z0-9]{14}\.[a-f0-9]{64}\b", "pat"),
    _rule("hubspot-token", "a HubSpot private app token",
          r"\bpat-(?:na|eu|ap)\d-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", "pat-"),
    _rule("contentful-token", "a Contentful token", r"\bCFPAT-[A-Za-z0-9_-]{43}" + _END, "CFPAT-"),
    # secret (sk.) and temporary (tk.) tokens; public pk. tokens are meant to be published
    _rule("mapbox-token", "a Mapbox secret token", r"\b[st]k\.eyJ[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{20,}",
          "sk.eyJ", "tk.eyJ"),
    # short-lived tokens, then long-lived ones (an app id, ten A's, the key)
    _rule("dropbox-token", "a Dropbox token", r"\bsl\.(?:u\.)?[A-Za-z0-9_=-]{120,}", "sl.", check=_mixed),
    _rule("dropbox-token", "a Dropbox token", r"\b[A-Za-z0-9]{11}AAAAAAAAAA[A-Za-z0-9_=-]{43}" + _END, "AAAAAAAAAA",
          inner=True, check=_mixed),
    _rule("algolia-key", "an Algolia API key",
          r"\b(?:SearchClient\.create|SearchClient|algoliasearch)\(\s*[\"'][A-Z0-9]{10}[\"']\s*,\s*[\"']"
          r"(?P<v>[a-f0-9]{32})[\"']", "SearchClient", "algoliasearch", group="v"),
    _rule("maxmind-key", "a MaxMind license key", r"\b[A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk\b", "_mmk", inner=True),
    # -- chat and messaging
    _rule("slack-token", "a Slack token", r"\bxox[abprse]-[A-Za-z0-9-]{10,}", "xox", check=_random_looking),
    _rule("slack-app-token", "a Slack app token", r"(?i)\bxapp-\d-[A-Z0-9]+-\d+-[a-z0-9]+", "xapp-", folded=True),
    _rule("slack-webhook", "a Slack webhook URL",
          r"hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/]{43,56}", "hooks.slack.com/",
          inner=True),
    _rule("discord-webhook", "a Discord webhook URL", r"discord(?:app)?\.com/api/webhooks/\d+/[\w-]{60,}",
          "/api/webhooks/", inner=True),
    _rule("teams-webhook", "a Microsoft Teams webhook URL",
          r"(?i)(?:\.webhook\.office\.com/webhookb2|\boutlook\.office(?:365)?\.com/webhook)/[a-z0-9@-]{40,}"
          r"/IncomingWebhook/[a-z0-9]{32}/[a-z0-9-]{36}",
          "webhook.office.com", "outlook.office", folded=True),
    # A bot id, a colon and 35 characters (34 in Telegram's own examples), also inside a /bot URL.
    _rule("telegram-bot-token", "a Telegram bot token", r"(?<![\w:])(?:bot)?\d{5,16}:[A-Za-z0-9_-]{34,35}" + _END,
          ":", inner=True, check=lambda v: _both_cases(v.partition(":")[2]) and _token_like(v.partition(":")[2])),
    _rule("fcm-server-key", "a Firebase Cloud Messaging server key",
          r"\bAAAA[A-Za-z0-9_-]{7}:APA91b[A-Za-z0-9_-]{100,}", "AAAA"),
    _rule("twilio-key", "a Twilio API key", r"\bSK[0-9a-fA-F]{32}\b", "SK"),
    _rule("sendgrid-key", "a SendGrid API key", r"\bSG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}" + _END, "SG."),
    _rule("sendinblue-key", "a Brevo (Sendinblue) API key", r"\bx(?:keysib|smtpsib)-[a-f0-9]{64}-[A-Za-z0-9]{16}\b",
          "xkeysib-", "xsmtpsib-"),
    _rule("mailgun-key", "a Mailgun API key", r"\b(?:key|pubkey)-[a-f0-9]{32}\b", "key-", "pubkey-"),
    _rule("mailchimp-key", "a Mailchimp API key", r"\b[a-f0-9]{32}-us\d{1,2}\b", "-us", inner=True),
    # -- payments and commerce
    _rule("stripe-key", "a Stripe secret key", r"\b(?:(?:sk|rk)_(?:live|test|prod)_[A-Za-z0-9]{16,}|whsec_[A-Za-z0-9]{32,})",
          "sk_live_", "sk_test_", "sk_prod_", "rk_live_", "rk_test_", "rk_prod_", "whsec_"),
    _rule("shopify-token", "a Shopify token", r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b", "shpat_", "shpca_", "shppa_",
          "shpss_"),
    _rule("square-token", "a Square token", r"\b(?:EAAA|sq0atp-|sq0csp-)[\w-]{22,60}", "EAAA", "sq0atp-", "sq0csp-"),
    _rule("facebook-token", "a Facebook access token", r"\bEAA[MC][A-Za-z0-9]{100,}", "EAAM", "EAAC"),
    _rule("shippo-token", "a Shippo token", r"\bshippo_(?:live|test)_[a-fA-F0-9]{40}\b", "shippo_"),
    _rule("easypost-key", "an EasyPost API key", r"\bEZ[AT]K[A-Za-z0-9]{54}\b", "EZAK", "EZTK"),
    _rule("flutterwave-key", "a Flutterwave secret key", r"\bFLWSECK(?:_TEST)?-[A-Za-z0-9]{12,32}(?:-X)?\b", "FLWSECK"),
    _rule("duffel-token", "a Duffel token", r"\bduffel_(?:test|live)_[A-Za-z0-9_=-]{43}", "duffel_"),
    _rule("plaid-token", "a Plaid access token",
          r"\baccess-(?:sandbox|development|production)-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b",
          "access-sandbox-", "access-development-", "access-production-"),
    # -- AI and data services
    # A key may hold no digit (letters of both cases are as random), unlike ``sk-learn-style``.
    _rule("anthropic-key", "an Anthropic API key", r"\bsk-ant-[A-Za-z0-9_-]{20,}", "sk-ant-", check=_keyish),
    _rule("openai-key", "an OpenAI-style API key", r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}", "sk-",
          check=_keyish),
    _rule("huggingface-token", "a Hugging Face token", r"\b(?:hf_[A-Za-z0-9]{30,}|api_org_[A-Za-z]{34})\b", "hf_",
          "api_org_", check=_mixed),
    _rule("replicate-token", "a Replicate token", r"\br8_[A-Za-z0-9]{37}\b", "r8_"),
    _rule("groq-key", "a Groq API key", r"\bgsk_[A-Za-z0-9]{52}\b", "gsk_"),
    _rule("xai-key", "an xAI API key", r"\bxai-[A-Za-z0-9]{80}\b", "xai-"),
    _rule("perplexity-key", "a Perplexity API key", r"\bpplx-[A-Za-z0-9]{48}\b", "pplx-"),
    _rule("langsmith-key", "a LangSmith API key", r"\blsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}\b", "lsv2_"),
    _rule("pinecone-key", "a Pinecone API key", r"\bpcsk_[A-Za-z0-9_]{50,}", "pcsk_"),
    # -- CI, code quality, networks and design tools (issue 31, part 3)
    _rule("bitbucket-token", "a Bitbucket app password", r"\bATBB[A-Za-z0-9_=.-]{32,}", "ATBB"),
    _rule("circleci-token", "a CircleCI token", r"\bCCI(?:PAT|PRJ)_[A-Za-z0-9]{22}_[a-f0-9]{40}\b", "CCIPAT_", "CCIPRJ_"),
    _rule("sonarqube-token", "a SonarQube token", r"\bsq[upa]_[a-f0-9]{40}\b", "squ_", "sqp_", "sqa_"),
    _rule("tailscale-key", "a Tailscale key", r"\btskey-(?:auth|api|client|scim|webhook)-[A-Za-z0-9]{6,}-[A-Za-z0-9]{20,}",
          "tskey-"),
    _rule("netlify-token", "a Netlify token", r"\bnf[pcoub]_[A-Za-z0-9]{36}\b", "nfp_", "nfc_", "nfo_", "nfu_", "nfb_"),
    _rule("figma-token", "a Figma token", r"\bfig[dou]_[A-Za-z0-9_-]{40}" + _END, "figd_", "figo_", "figu_"),
    _rule("okta-token", "an Okta API token", r"\bSSWS[ \t]+(?P<v>00[A-Za-z0-9_-]{40})" + _END, "SSWS", group="v"),
    # A bot's id in base64 (an 18- or 19-digit snowflake: MT..., Nz..., OD...), a time, an HMAC.
    _rule("discord-bot-token", "a Discord bot token",
          r"(?<![\w.-])[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}(?![\w.-])",
          "MT", "Mj", "Mz", "ND", "NT", "Nj", "Nz", "OD", "OT", check=lambda v: _decodes_to_digits(v.partition(".")[0])),
    _rule("azure-devops-token", "an Azure DevOps personal access token",
          r"\b[A-Za-z0-9]{52}JQQJ99[A-Za-z0-9]{18}AZDO[A-Za-z0-9]{4}\b", "JQQJ99", inner=True),
    _rule("render-key", "a Render API key", r"\brnd_[A-Za-z0-9]{32}\b", "rnd_"),
    _rule("buildkite-token", "a Buildkite token", r"\bbkua_[a-f0-9]{40}\b", "bkua_"),
    _rule("asana-token", "an Asana personal access token", r"(?<![\w/])[12]/\d{10,20}(?:/\d{10,20})?:[a-f0-9]{32}\b",
          ":", inner=True),
    # -- keyed values whose token has no prefix of its own
    # (after every prefixed rule: a prefixed token next to an AWS key id or a Twilio SID is that token)
    _rule(
        # The secret half of a key pair has no prefix, but a 40-character base64 value within two
        # lines after an access key id is it: a credentials CSV row, boto3's positional arguments.
        "aws-secret-key", "an AWS secret access key",
        r"\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b(?:[^\n]{0,100}?\n){0,2}?[^\n]{0,100}?"
        r"(?<![\w/+-])(?P<v>[A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])",
        "AKIA", "ASIA", "ABIA", "ACCA", "A3T", group="v", check=lambda v: _token_like(v, 40) and _both_cases(v),
    ),
    _rule(
        # An auth token has no prefix; next to its account SID (``Client(sid, token)``) it is one.
        "twilio-auth-token", "a Twilio auth token",
        r"\bAC[a-f0-9]{32}\b(?:[^\n]{0,60}?\n){0,2}?[^\n]{0,60}?\b(?P<v>[a-f0-9]{32})\b",
        "AC", group="v", check=_random_looking,
    ),
    _rule(
        "aws-secret-key", "an AWS secret access key",
        r"(?i)\b(?:aws[\s_-]*secret|secret[\s_-]*access)[\w\s-]{0,20}?[\"'\]]*[\s:=>]*(?:\b(?:is|was)\s+)?[\"']?"
        r"(?P<v>[A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])",
        "aws", "secret", folded=True, group="v", check=_random_looking,
    ),
    _rule(
        "wandb-key", "a Weights & Biases API key",
        r"(?i)\bwandb\b[\w\s.-]{0,20}?(?:login|key|[:=])\s*[\"']?(?P<v>[a-f0-9]{40})\b", "wandb", folded=True, group="v",
    ),
    _rule(
        "kaggle-key", "a Kaggle API key", r"(?i)\"key\"\s*:\s*\"(?P<v>[a-f0-9]{32})\"", "\"key\"", folded=True, group="v",
    ),
    _rule(
        "twilio-auth-token", "a Twilio auth token",
        r"(?i)\btwilio[\w\s.-]{0,30}?(?:token|secret)[\w\s]{0,10}?[\"']?\s*(?:[:=]|\bis\b|\bwas\b)\s*[\"']?(?P<v>[a-f0-9]{32})\b",
        "twilio", folded=True, group="v",
    ),
]

# Credentials that are not tokens: they need no long run of token characters.
_CREDENTIALS: list[Rule] = [
    _rule(
        "url-credentials", "a password in a URL",
        r"(?<![\w+.-])[A-Za-z][A-Za-z0-9+.-]{0,30}://[^\s:/@]*:(?P<v>[^\s/@]+)@[^\s/@]",
        "://", token=False, group="v", check=lambda v: not _placeholder(v),
    ),
    _rule(
        # curl -u user:password, wget --user ... --password is caught by the flag rule;
        # docker's -u 1000:1000 is a user and a group
        "password", "a password",
        r"(?<![\w-])(?:-u|--user)[ =]+['\"]?(?!\d+:\d+(?![^\s'\"]))[^\s:'\"]+:(?P<v>[^\s'\"]+)",
        "-u ", "-u=", "--user", token=False, group="v", check=lambda v: not _placeholder(v),
    ),
    _rule(
        "bearer-token", "a bearer token", r"(?i)\bbearer\s+(?P<v>[A-Za-z0-9._~+/-]{16,}=*)",
        "bearer", folded=True, group="v", check=_random_looking,
    ),
    _rule(
        "basic-auth", "HTTP basic credentials",
        r"(?i)\bauthorization[\"']?\s*[:=]\s*[\"']?basic\s+(?P<v>[A-Za-z0-9+/]{8,}=*)",
        "authorization", folded=True, token=False, group="v",
    ),
    _rule(
        "auth-header", "an HTTP authorization credential",
        r"(?i)\bauthorization[\"']?\s*[:=]\s*[\"']?(?:token|api-?key|sso-key|key)\s+(?P<v>[A-Za-z0-9._~+/:=-]{16,})",
        "authorization", folded=True, token=False, group="v", check=_keyish,
    ),
    # -- passwords told by the syntax around them, where a plain word is a password
    _rule(
        # netrc, on one line or as the file is written: machine host [login u] [account a] password p
        "password", "a password",
        r"(?i)\bmachine\s+\S+(?:\s+(?:login|account|port)\s+\S+){0,3}\s+password\s+(?P<v>\S+)",
        "machine", folded=True, token=False, group="v", check=_word_password,
    ),
    _rule(
        # a netrc entry without its machine: only a value that looks random ("the login page password field")
        "password", "a password", r"(?i)\blogin[ \t]+\S+\s+password[ \t]+(?P<v>\S+)",
        "login", folded=True, token=False, group="v", check=lambda v: len(v) >= 6 and _random_looking(v),
    ),
    _rule(
        # A connection string's setting after ``;`` (ADO.NET, ODBC, JDBC), ``?`` or ``&`` (a URL's
        # query); the first setting and libpq's ``host=db password=...`` are seen by ``_says_literal``.
        "password", "a password", r"(?i)[;?&][ \t]*(?:password|pwd)[ \t]*=[ \t]*(?P<v>[^\s;&'\",()]+)",
        "password", "pwd", folded=True, token=False, group="v", check=_word_password,
    ),
    _rule(
        # Clients that take the password on the command line: mysql -pX, docker login -p X, redis-cli -a X
        "password", "a password",
        r"(?:\b(?:mysql(?:dump|admin|import|show|check|slap|sh)?|mariadb(?:-dump|-admin|-import|-show|-check)?)\b"
        r"[^\n|;&]{0,200}?[ \t]-p(?=['\"]?[^\s'\"])['\"]?"
        r"|\b(?:(?:docker|podman|nerdctl)[ \t]+login|sshpass)\b[^\n|;&]{0,200}?[ \t]-p[ \t]+['\"]?"
        r"|\bredis-cli\b[^\n|;&]{0,200}?[ \t]-a[ \t]+['\"]?)(?P<v>[^\s'\"]+)",
        # folded hints, "login" (docker login) shared with the netrc rule
        "mysql", "mariadb", "login", "sshpass", "redis-cli", folded=True, token=False, group="v", check=_word_password,
    ),
    _rule(
        # A .pgpass line, hostname:port:database:username:password (a hostname has a letter, a dot or *)
        "password", "a password",
        r"(?m)(?:^|(?<=['\"]))[ \t]*(?=[A-Za-z0-9_+/=.~:*-]{16})(?=[^:\s]*[A-Za-z.*])[A-Za-z0-9.*_-]{1,253}"
        r":(?:\d{1,5}|\*):[^\s:'\"]{1,63}:[^\s:'\"]{1,63}:(?P<v>[^\s:'\"]+)[ \t]*(?=$|['\"])",
        ":", inner=True, group="v", check=_word_password,
    ),
    _rule(
        # .option("password", "..."), os.environ.setdefault("PGPASSWORD", "..."): not a column list,
        # so a value made of letters alone is taken for a name
        "password", "a password",
        r"(?i)\(\s*[\"'][\w.-]{0,30}?(?:password|pwd)[\"']\s*,\s*[\"'](?P<v>[^\"'\s]{4,})[\"']\s*\)",
        "password", "pwd", folded=True, token=False, group="v",
        check=lambda v: not _placeholder(v) and not re.fullmatch(r"[A-Za-z_]+", v),
    ),
]

_RULES: list[Rule] = _TOKENS + _CREDENTIALS
RULE_KINDS = frozenset(r.kind for r in _RULES) | {"password", "token", "api-key", "secret"}

_KEY_HEADER = re.compile(rf"{_ARMOR}BEGIN{_KEY_LABEL}{_ARMOR_END}")
