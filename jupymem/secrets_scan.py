"""Secrets in text: find them, mask them for messages, redact them.

Everything that enters memory (every free-text field of every event, see
``validate``), and every failed cell kept as evidence, passes through
``find_secrets``: a field that holds one is refused, an excerpt or error line
has it replaced by ``[REDACTED:<kind>]``.

What it knows comes from the token formats that gitleaks' rule set documents
(``config/gitleaks.toml``): the keyed prefixes that providers put on their
tokens (``glpat-``, ``npm_``, ``SG.``, ``dapi``, ``GOCSPX-`` ...), which make a
token recognisable wherever it is written, plus a few shapes of our own for the
way people write in notebooks: a ``name = value`` assignment, a command-line
flag, and prose ("the AWS secret access key is ...").

Detection leans towards refusing: a false alarm costs the person a
rephrasing, a miss puts a credential into a database that is exported and
shared through git. The exceptions are the shapes that notebooks are full of
and that hold no secret: a name bound to code (``token = os.environ["TOKEN"]``),
a placeholder (``password=<your password>``, ``${PASSWORD}``, ``"***"``), prose
that merely mentions passwords or tokens, and identifiers, hashes and paths
(``tests/test_secret_shapes.py`` holds a corpus of them that must stay clean).

It is cheap on the text it sees most, ordinary prose: every rule has *hints*,
literal fragments one of which every match of the rule contains, and a rule
runs only when one of its hints occurs. Token-shaped rules also need a run of
at least 16 token characters somewhere in the text, which short-worded prose
lacks. A hint may fire where its rule then finds nothing, never the other way
round: ``tests/test_secrets_scan.py`` checks that the hinted scan and the full
scan agree.

Stdlib only, regexes compiled at import.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["ELLIPSIS", "SecretFinding", "find_secrets", "redact", "redact_key_blocks", "RULE_KINDS"]

ELLIPSIS = "…"


@dataclass(frozen=True)
class SecretFinding:
    """One secret found in a text: ``text[start:end]`` is the secret itself."""

    kind: str  # stable slug, used in ``[REDACTED:<kind>]``
    label: str  # for people: "an AWS access key"
    start: int
    end: int
    masked: str  # a preview that never holds the whole secret


def _mask(value: str) -> str:
    n = len(value)
    if n >= 16:
        return f"{value[:4]}{ELLIPSIS}{value[-4:]}"
    if n >= 10:
        return f"{value[:2]}{ELLIPSIS}{value[-2:]}"
    return f"{value[:1]}{ELLIPSIS}"


# -- what a value looks like ------------------------------------------------------


def _random_looking(value: str) -> bool:
    """Mixed letters and digits, as keys and tokens are; words and names are not."""
    has_digit = any(c.isdigit() for c in value)
    has_alpha = any(c.isalpha() for c in value)
    return has_digit and has_alpha


def _mixed(value: str) -> bool:
    """Random-looking, or letters of both cases (some tokens hold no digit)."""
    return _random_looking(value) or (any(c.islower() for c in value) and any(c.isupper() for c in value))


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


# What a value looks like when it stands in for a secret instead of being one.
_PLACEHOLDER = re.compile(
    r"""^(?:
        \$\{[^}]*\}|\$\(?[A-Za-z_]\w*\)?|%\(?\w*\)?s|%[A-Za-z_]\w*%|\{\{?[^}]*\}\}?
      | <[^>]*>|\[[^\]]*\]
      | [*x.•…#?-]{3,}|x+|X+
      | (?:your|my|the|some|example|sample|dummy|fake|placeholder)?[_ -]?
        (?:password|passwd|pass|pwd|secret|token|api[_ -]?key|key|value|here|xxx+)
        (?:[_ -]?here)?
      | changeme|redacted|none|null|nil|true|false|undefined|env|getpass
    )$""",
    re.IGNORECASE | re.VERBOSE,
)


def _placeholder(value: str) -> bool:
    v = value.strip()
    return not v or bool(_PLACEHOLDER.match(v)) or "REDACTED" in v.upper()


def _literal_value(text: str, value: str, end: int, quoted: bool) -> bool:
    """True when an assigned value is a literal secret, not code or a stand-in."""
    if len(value) < 4 or _placeholder(value):
        return False
    if quoted:
        # A quoted sentence or a file name is not a credential.
        return not any(c.isspace() for c in value) and not re.fullmatch(
            r"[\w./~\\-]+\.(?:json|ya?ml|txt|cfg|ini|env|pem|key|toml|csv)|[./~].*", value
        )
    after = text[end : end + 2]
    if after[:1] in ("(", "[") or (after[:1] == "." and after[1:2].strip()):
        return False  # a call, subscript or attribute: code, not a value (a full stop is fine)
    if re.fullmatch(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+", value):
        return False  # dotted name: settings.token, os.environ
    if value[0] in "/~":
        return False  # a path
    return len(value) >= 6 and _random_looking(value)


# -- the rules ----------------------------------------------------------------------


@dataclass(frozen=True)
class Rule:
    """One shape of secret.

    ``hints``: fragments one of which every match contains, compared with the text
    as it is (``folded=False``) or lowercased (``folded=True``, for rules that
    ignore case). Unless ``inner``, each hint is where a match starts, at the start
    of a word (the pattern begins with ``\b`` and the hint). ``token``: every match
    holds a run of 16 token characters, so the rule is skipped for text that has none. ``group``: the part that is secret
    (the whole match when None); ``check``: a last look at that part.
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


def _rule(kind: str, label: str, regex: str, *hints: str, **kw: object) -> Rule:
    return Rule(kind, label, re.compile(regex), tuple(hints), **kw)  # type: ignore[arg-type]


# The end of a token: not followed by more token characters.
_END = r"(?![A-Za-z0-9_-])"
_PEM_BODY = re.compile(r"[A-Za-z0-9+/=]{16,}")

# Specific shapes first: when two rules match the same characters the earlier wins.
_TOKENS: list[Rule] = [
    # -- private keys and key files
    _rule(
        "private-key", "a private key",
        r"-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----[\s\S]*?"
        r"(?:-----END[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----|\Z)",
        "-----BEGIN", inner=True,
        # key material, not prose that names the format: a long unbroken base64 run
        check=lambda v: _PEM_BODY.search(re.sub(r"-----[^-]+-----", "", v)) is not None,
    ),
    _rule("putty-key", "a PuTTY private key", r"PuTTY-User-Key-File-\d:[\s\S]*?Private-Lines: \d+\s+[A-Za-z0-9+/=\s]{40,}",
          "PuTTY-User-Key-File-", inner=True),
    _rule("age-secret-key", "an age secret key", r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}",
          "AGE-SECRET-KEY-1", inner=True),
    _rule("jwt", "a JSON Web Token", r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}", "eyJ"),
    # -- clouds
    _rule("aws-access-key", "an AWS access key", r"\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b",
          "AKIA", "ASIA", "ABIA", "ACCA", "A3T"),
    _rule("aws-bedrock-key", "an Amazon Bedrock API key", r"\bABSK[A-Za-z0-9+/]{109,269}={0,2}", "ABSK"),
    _rule("azure-client-secret", "an Azure AD client secret",
          r"(?<![A-Za-z0-9_~.])[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.-]{31,34}(?![A-Za-z0-9_~.-])", "Q~", inner=True),
    _rule("azure-storage-key", "an Azure storage account key", r"(?i)\bAccountKey=(?P<v>[A-Za-z0-9+/]{80,}={0,2})",
          "accountkey=", folded=True, group="v"),
    _rule("azure-sas-token", "an Azure shared access signature", r"(?i)[?&;]sig=(?P<v>[A-Za-z0-9%+/=]{30,})",
          "sig=", folded=True, group="v"),
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
    _rule("databricks-token", "a Databricks token", r"\bdapi[a-f0-9]{32}(?:-\d)?\b", "dapi"),
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
          r"(?i)\.webhook\.office\.com/webhookb2/[a-z0-9@-]{40,}/IncomingWebhook/[a-z0-9]{32}/[a-z0-9-]{36}",
          "webhook.office.com", folded=True),
    _rule("telegram-bot-token", "a Telegram bot token", r"(?<![\w:])\d{5,16}:A[A-Za-z0-9_-]{34}" + _END, ":A", inner=True),
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
    _rule("anthropic-key", "an Anthropic API key", r"\bsk-ant-[A-Za-z0-9_-]{20,}", "sk-ant-", check=_random_looking),
    _rule("openai-key", "an OpenAI-style API key", r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}", "sk-",
          check=_random_looking),
    _rule("huggingface-token", "a Hugging Face token", r"\b(?:hf_[A-Za-z0-9]{30,}|api_org_[A-Za-z]{34})\b", "hf_",
          "api_org_", check=_mixed),
    _rule("replicate-token", "a Replicate token", r"\br8_[A-Za-z0-9]{37}\b", "r8_"),
    _rule("groq-key", "a Groq API key", r"\bgsk_[A-Za-z0-9]{52}\b", "gsk_"),
    _rule("xai-key", "an xAI API key", r"\bxai-[A-Za-z0-9]{80}\b", "xai-"),
    _rule("perplexity-key", "a Perplexity API key", r"\bpplx-[A-Za-z0-9]{48}\b", "pplx-"),
    _rule("langsmith-key", "a LangSmith API key", r"\blsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}\b", "lsv2_"),
    _rule("pinecone-key", "a Pinecone API key", r"\bpcsk_[A-Za-z0-9_]{50,}", "pcsk_"),
    # -- keyed values whose token has no prefix of its own
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
        # curl -u user:password, wget --user ... --password is caught by the flag rule
        "password", "a password", r"(?<![\w-])(?:-u|--user)[ =]+['\"]?[^\s:'\"]+:(?P<v>[^\s'\"]+)",
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
]

_RULES: list[Rule] = _TOKENS + _CREDENTIALS
RULE_KINDS = frozenset(r.kind for r in _RULES) | {"password", "token", "api-key", "secret"}

_KEY_HEADER = re.compile(r"-----BEGIN [A-Z0-9 _-]*PRIVATE KEY(?: BLOCK)?-----")

# -- name = value, --flag value, and prose ------------------------------------------

_KEY_NAME = (
    r"(?:[A-Za-z0-9]{1,40}[_.-]){0,6}"
    r"(?:password|passwd|passphrase|secret|token|api[_-]?key|apikey|"
    r"(?:access|secret|private|account|client|signing|master|license|licence|encryption|service)[_-]?key|"
    r"client[_-]?secret|auth[_-]?token|access[_-]?token|refresh[_-]?token|bearer[_-]?token)"
)
# A name that merely ends in ``_key`` (``KAGGLE_KEY``, ``sort_key``): its value must look
# like a token, not like a column name.
_LOOSE_KEY_NAME = r"(?:[A-Za-z0-9]{1,40}[_.-]){1,6}key"
_VALUE = r"""(?:"(?P<dq>[^"\n]*)"|'(?P<sq>[^'\n]*)'|(?P<bare>[^\s"'`,;()\[\]{}<>]+))"""

# ``password = "hunter22"``, ``"api_key": "..."``, ``API_KEY: abc123def``, ``token=...``
_ASSIGNMENT = re.compile(
    rf"(?<![\w.-])(?P<name>{_KEY_NAME}|{_LOOSE_KEY_NAME})(?![\w-])[\"'\]]*"
    r"(?:\s*:\s*[A-Za-z_][\w.\[\]| ]*?(?=\s*=))?"  # a type annotation: password: str = ...
    rf"\s*(?:==?|:=?|=>)\s*{_VALUE}",
    re.IGNORECASE,
)
# ``--password hunter2``, ``--api-key=abc123...``
_FLAG = re.compile(rf"(?<![\w-])--?(?P<name>{_KEY_NAME})(?:=|\s+){_VALUE}", re.IGNORECASE)

# Words that make a "<word> key" a credential in prose; "join key", "sort key" are not.
_KEY_QUALIFIERS = frozenset(
    """api access secret private license licence auth signing master client account service encryption admin
    app application deploy deployment webhook subscription developer personal consumer root sas storage ssh gpg
    pgp bearer session""".split()
)
# ``the password is hunter2``, ``the AWS secret access key is ...``, ``my GitLab token: ...``.
# The words before "key" are looked at in Python (``_qualified``): a regex that tried
# every word as a possible qualifier cost five times as much on ordinary prose.
_PROSE = re.compile(
    r"(?i)\b(?P<name>key|password|passwd|passphrase|pass[\s-]?code|secret|token|credential)s?\b"
    r"(?:\s+(?:for|of|to|on|at|in)(?:\s+[\w.@/'-]{1,40}){1,4}?)?"
    r"\s*(?:\bis\b|\bwas\b|\bare\b|=|:|->)\s*(?:now\s+|still\s+|set\s+to\s+)?"
    + _VALUE,
)
_BEFORE_KEY = re.compile(r"(?:[A-Za-z0-9]+[\s_-]+){1,3}$")

# What each generic rule needs, searched for in the lowercased text: a name ending as
# every key name ends, then ``=`` or ``:`` (assignment); a ``--flag`` naming one; a
# name followed within a short clause by "is", "was", "are", ``:``, ``=`` or ``->``
# (prose). None of them can match without "key", "token", "pass", "secret" or "credential".
_NAME_END = r"(?:pass(?:word|wd|phrase)|secret|token|key)"
_GENERIC = (
    (_ASSIGNMENT, re.compile(rf"{_NAME_END}[\"'\]]*\s*[:=]")),
    (_FLAG, re.compile(rf"-[a-z0-9_.-]*{_NAME_END}")),
    (
        _PROSE,
        re.compile(
            r"(?:key|pass(?:word|wd|phrase)|pass[\s-]?code|secret|token|credential)s?\b[^\n]{0,100}?"
            r"(?:\b(?:is|was|are)\b|->|[:=])"
        ),
    ),
)


def _qualified(text: str, start: int) -> bool:
    """Whether the words just before a "key" at ``start`` make it a credential."""
    m = _BEFORE_KEY.search(text, max(0, start - 60), start)
    words = re.split(r"[\s_-]+", m.group().lower()) if m else []
    return bool(_KEY_QUALIFIERS.intersection(words))


def _label_for(name: str) -> tuple[str, str]:
    low = name.lower()
    if "pass" in low:
        return "password", "a password"
    if "token" in low:
        return "token", "a token"
    if "key" in low:
        return "api-key", "an API key or secret key"
    return "secret", "a secret"


# -- scanning ---------------------------------------------------------------------

# A run of token characters long enough to be a token (every token rule needs one).
_LONG_RUN = re.compile(r"[A-Za-z0-9_+/=.~:-]{16,}")
# What case folding in ``re.IGNORECASE`` makes equal to ASCII letters.
_FOLD = str.maketrans({"ſ": "s", "\u212a": "k", "ı": "i", "İ": "i"})


def _fold(text: str) -> str:
    return text.lower() if text.isascii() else text.translate(_FOLD).lower()


# Where a text's words start: their first two characters. A prefix hint is looked for
# only when its first two characters start a word somewhere in the text, which turns
# ~130 substring tests into one regex pass and a set intersection.
_STARTS = re.compile(r"(?<![A-Za-z0-9])[A-Za-z0-9]{2}")
_PREFIX_HINTS: dict[str, list[tuple[str, Rule]]] = {}
_INNER_HINTS: list[tuple[str, bool, Rule]] = []  # the token rules' other hints
_OTHER_HINTS: list[tuple[str, bool, Rule]] = []  # rules that need no long run
for _r in _RULES:
    for _h in _r.hints:
        if not _r.token:
            _OTHER_HINTS.append((_h, _r.folded, _r))
        elif _r.inner or _r.folded or not _h[:2].isalnum():
            _INNER_HINTS.append((_h, _r.folded, _r))
        else:
            _PREFIX_HINTS.setdefault(_h[:2], []).append((_h, _r))
_PREFIX_KEYS = frozenset(_PREFIX_HINTS)


def _candidates(text: str, folded: str | None = None) -> list[Rule]:
    """The rules one of whose hints occurs in ``text`` (all that a full scan could need)."""
    if folded is None:
        folded = _fold(text)
    hits: set[int] = set()
    for hint, fold, rule in _OTHER_HINTS:
        if hint in (folded if fold else text):
            hits.add(id(rule))
    if _LONG_RUN.search(folded) is not None:  # folded: to IGNORECASE rules, ı is an i
        for hint, fold, rule in _INNER_HINTS:
            if hint in (folded if fold else text):
                hits.add(id(rule))
        for start in _PREFIX_KEYS.intersection(_STARTS.findall(text)):
            for hint, rule in _PREFIX_HINTS[start]:
                if hint in text:
                    hits.add(id(rule))
    return [rule for rule in _RULES if id(rule) in hits] if hits else []


def find_secrets(text: str) -> list[SecretFinding]:
    """Every secret in ``text``, in order, without overlaps.

    Specific shapes (an AWS key, a GitLab token) win over the generic
    ``name = value`` and prose rules when both match the same characters.
    """
    if not text:
        return []
    folded = _fold(text)
    rules = _candidates(text, folded)
    generic: list[re.Pattern[str]] = []
    if "key" in folded or "token" in folded or "pass" in folded or "secret" in folded or "credential" in folded:
        generic = [rule for rule, hint in _GENERIC if hint.search(folded) is not None]
    if not rules and not generic:
        return []  # most prose: no rule could match
    return _scan(text, rules=rules, generic=generic)


def _scan(
    text: str, *, rules: list[Rule] | None = None, generic: list[re.Pattern[str]] | None = None
) -> list[SecretFinding]:
    """The rules themselves, all of them by default; ``find_secrets`` passes the hinted ones."""
    found: list[SecretFinding] = []

    def add(kind: str, label: str, start: int, end: int) -> None:
        if start >= end or any(start < f.end and f.start < end for f in found):
            return
        value = text[start:end]
        # A key block's header says what it is and holds nothing secret.
        header = _KEY_HEADER.match(value) if kind == "private-key" else None
        masked = header.group() + ELLIPSIS if header else _mask(value)
        found.append(SecretFinding(kind, label, start, end, masked))

    for rule in _RULES if rules is None else rules:
        for m in rule.pattern.finditer(text):
            start, end = m.span(rule.group) if rule.group is not None else m.span()
            if rule.check is None or rule.check(text[start:end]):
                add(rule.kind, rule.label, start, end)

    generic = [rule for rule, _ in _GENERIC] if generic is None else generic
    for pattern in (p for p in (_ASSIGNMENT, _FLAG) if p in generic):
        for m in pattern.finditer(text):
            group = next(g for g in ("dq", "sq", "bare") if m.group(g) is not None)
            value = m.group(group)
            start, end = m.span(group)
            name = m.group("name")
            strict = re.fullmatch(_KEY_NAME, name, re.IGNORECASE) is not None
            if _literal_value(text, value, end, quoted=group != "bare") and (strict or _token_like(value)):
                add(*_label_for(name), start, end)
    for m in _PROSE.finditer(text) if _PROSE in generic else ():
        group = next(g for g in ("dq", "sq", "bare") if m.group(g) is not None)
        value = m.group(group).rstrip(".,;:!?")
        start = m.start(group)
        end = start + len(value)
        name = m.group("name").lower()
        if name == "key" and not _qualified(text, m.start("name")):
            continue  # a join key, a sort key: not a credential
        if "pass" in name:
            ok = _literal_value(text, value, end, quoted=False)
        else:
            ok = not _placeholder(value) and _token_like(value, 12)
        if ok:
            add(*_label_for(name), start, end)

    found.sort(key=lambda f: f.start)
    return found


def redact(text: str) -> str:
    """``text`` with every secret replaced by ``[REDACTED:<kind>]``."""
    out = text
    for f in reversed(find_secrets(text)):
        out = f"{out[:f.start]}[REDACTED:{f.kind}]{out[f.end:]}"
    return out


_KEY_BLOCK = _TOKENS[0].pattern


def redact_key_blocks(text: str) -> str:
    """``text`` with every private key block replaced as a whole, across lines.

    Run on a whole message before it is split into lines: line by line, a key's
    header holds nothing secret and its body lines look like nothing at all.
    """
    if "-----BEGIN" not in text:
        return text
    return _KEY_BLOCK.sub("[REDACTED:private-key]", text)
