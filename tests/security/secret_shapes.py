"""Real-shaped fake credentials of every kind the scanner covers, generated from a seed at run time.

Nothing credential-shaped is committed: vendor prefixes are built from parts and bodies are random, so
push-protection scanners see no key in the repository. `examples(seed)` returns (kind, text, secret)
triples: `text` is a sentence, a config line or a code line holding `secret`, which must be found.
"""

from __future__ import annotations

import base64
import json
import random
import string
from collections.abc import Callable

UP, LO, DG = string.ascii_uppercase, string.ascii_lowercase, string.digits
ALNUM = UP + LO + DG
URLSAFE = ALNUM + "-_"
B64 = ALNUM + "+/"
HEX = "0123456789abcdef"
BASE32 = UP + "234567"
BECH32 = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"


def j(*parts: str) -> str:
    """A vendor prefix from parts, so the literal never appears whole in the source."""
    return "".join(parts)


class Gen:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def s(self, alphabet: str, n: int) -> str:
        """Random characters, re-drawn until they mix two of upper case, lower case and digits when the
        alphabet can (a real key of this length always does)."""
        possible = sum(any(c in group for c in alphabet) for group in (UP, LO, DG))
        while True:
            out = "".join(self.rng.choice(alphabet) for _ in range(n))
            if sum(any(c in group for c in out) for group in (UP, LO, DG)) >= min(2, possible, n):
                return out

    def password(self) -> str:
        word = self.rng.choice(["hunter", "correct", "maple", "orbit", "pelican", "tundra", "falcon"])
        return f"{word.capitalize()}{self.rng.randint(10, 9999)}{self.rng.choice('!#%^&*?')}"

    def digits(self, n: int) -> str:
        return str(self.rng.randint(1, 9)) + "".join(self.rng.choice(DG) for _ in range(n - 1))


Example = tuple[str, str, str]  # kind, text, secret


def _jwt(g: Gen) -> str:
    def part(obj: dict[str, object]) -> str:
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")

    claims = {"sub": g.digits(10), "name": "Kim", "iat": int(g.digits(10))}
    return f"{part({'alg': 'HS256', 'typ': 'JWT'})}.{part(claims)}.{g.s(URLSAFE, 43)}"


def _pem(g: Gen, label: str, lower: bool = False) -> str:
    body = "\n".join(g.s(B64, 64) for _ in range(6))
    head = f"-----BEGIN {label}PRIVATE KEY-----"
    tail = f"-----END {label}PRIVATE KEY-----"
    if lower:
        head, tail = head.lower(), tail.lower()
    return f"{head}\n{body}\n{tail}"


def _aws_id(g: Gen) -> str:
    return j("AK", "IA") + g.s(BASE32, 16)


def put(template: str, secret: str) -> tuple[str, str]:
    return template.replace("{}", secret), secret


def b64(s: str) -> str:
    return base64.b64encode(s.encode()).decode()


ANTHROPIC_PREFIX = j("sk-", "ant-", "api03-")

# kind → shapes; each shape makes (text, secret) from a generator
SHAPES: dict[str, list[Callable[[Gen], tuple[str, str]]]] = {
    "private_key": [
        lambda g: put("deploy key:\n{}\nkeep it safe", _pem(g, "RSA ")),
        lambda g: put("{}\n", _pem(g, "OPENSSH ")),
        lambda g: put("pasted: {}", _pem(g, "", lower=True)),
        lambda g: put("truncated paste:\n{}", _pem(g, "EC ").rsplit("\n", 1)[0]),
    ],
    "aws_access_key": [
        lambda g: put("the key id is {}.", _aws_id(g)),
        lambda g: put('"AccessKeyId": "{}"', j("AS", "IA") + g.s(BASE32, 16)),
    ],
    "aws_secret_key": [
        lambda g: put("aws_secret_access_key = {}", g.s(B64, 40)),
        lambda g: put(f"id {_aws_id(g)}\nsecret {{}}\nregion us-east-1", g.s(B64, 40)),
        lambda g: put(f"{_aws_id(g)} / {{}}", g.s(B64, 40)),
    ],
    "anthropic_key": [
        lambda g: put("ANTHROPIC_API_KEY={}", ANTHROPIC_PREFIX + g.s(URLSAFE, 93) + "AA"),
        lambda g: put("use {} for the admin calls", j("sk-", "ant-", "admin01-") + g.s(URLSAFE, 93) + "AA"),
    ],
    "openai_key": [
        lambda g: put(
            "OPENAI_API_KEY={}", j("sk-", "proj-") + g.s(URLSAFE, 74) + "T3BlbkFJ" + g.s(URLSAFE, 74)
        ),
        lambda g: put("key: {}", j("sk", "-") + g.s(ALNUM, 20) + "T3BlbkFJ" + g.s(ALNUM, 20)),
    ],
    "stripe_key": [
        lambda g: put("stripe {}", j("sk", "_live_") + g.s(ALNUM, 24)),
        lambda g: put("restricted: {}", j("rk", "_live_") + g.s(ALNUM, 24)),
        lambda g: put("stripe.api_key = '{}'", j("sk", "_test_") + g.s(ALNUM, 99)),
        lambda g: put("webhook signing secret {}", j("wh", "sec_") + g.s(ALNUM, 32)),
    ],
    "github_token": [
        lambda g: put("token {}", j("gh", "p_") + g.s(ALNUM, 36)),
        lambda g: put("GH_TOKEN={}", j("github", "_pat_") + g.s(ALNUM + "_", 82)),
        lambda g: put("oauth {}", j("gh", "o_") + g.s(ALNUM, 36)),
    ],
    "gitlab_token": [
        lambda g: put("gitlab token {}", j("gl", "pat-") + g.s(URLSAFE, 20)),
        lambda g: put("runner: {}", j("gl", "rt-") + g.s(URLSAFE, 20)),
    ],
    "slack_token": [
        lambda g: put("bot token {}", j("xo", "xb-") + f"{g.digits(12)}-{g.digits(13)}-{g.s(ALNUM, 24)}"),
        lambda g: put(
            "user {}", j("xo", "xp-") + f"{g.digits(12)}-{g.digits(12)}-{g.digits(13)}-{g.s(HEX, 32)}"
        ),
    ],
    "slack_webhook": [
        lambda g: put(
            "post to {}",
            j("https://hooks.", "slack.com/services/")
            + f"T{g.s(UP + DG, 8)}/B{g.s(UP + DG, 8)}/{g.s(ALNUM, 24)}",
        ),
    ],
    "discord_webhook": [
        lambda g: put(
            "alerts go to {}",
            j("https://discord.com/", "api/webhooks/") + f"{g.digits(18)}/{g.s(URLSAFE, 68)}",
        ),
    ],
    "google_api_key": [
        lambda g: put("maps key {}", j("AI", "za") + g.s(URLSAFE, 35)),
        lambda g: put('"client_secret": "{}"', j("GOC", "SPX-") + g.s(URLSAFE, 28)),
    ],
    "google_oauth_token": [lambda g: put("access token {}", j("ya", "29.") + g.s(URLSAFE, 120))],
    "huggingface_token": [
        lambda g: put("HF_TOKEN={}", j("hf", "_") + g.s(UP + LO, 34)),
        lambda g: put("login with {}", j("hf", "_") + g.s(UP + LO, 34)),
    ],
    "npm_token": [lambda g: put("//registry.npmjs.org/:_authToken={}", j("np", "m_") + g.s(ALNUM, 36))],
    "pypi_token": [lambda g: put("password = {}", j("pypi-", "AgEIcHlwaS5vcmc") + g.s(URLSAFE, 150))],
    "sendgrid_key": [
        lambda g: put("SENDGRID_API_KEY={}", j("S", "G.") + f"{g.s(URLSAFE, 22)}.{g.s(URLSAFE, 43)}"),
        lambda g: put("mail via {}", j("S", "G.") + f"{g.s(URLSAFE, 22)}.{g.s(URLSAFE, 43)}"),
    ],
    "azure_storage_key": [
        lambda g: put(
            "DefaultEndpointsProtocol=https;AccountName=notes;"
            + j("Account", "Key")
            + "={};EndpointSuffix=core.windows.net",
            g.s(B64, 86) + "==",
        ),
    ],
    "azure_client_secret": [
        lambda g: put("AZURE_CLIENT_SECRET={}", g.s(ALNUM, 3) + g.digits(1) + "Q~" + g.s(ALNUM + "_~.-", 34)),
    ],
    "twilio_key": [lambda g: put("twilio api key {}", j("S", "K") + g.s(HEX, 32))],
    "mailgun_key": [
        lambda g: put("mailgun: {}", j("ke", "y-") + g.s(HEX, 32)),
        lambda g: put("MAILGUN_API_KEY={}", f"{g.s(HEX, 32)}-{g.s(HEX, 8)}-{g.s(HEX, 8)}"),
    ],
    "mailchimp_key": [lambda g: put("mailchimp {}", f"{g.s(HEX, 32)}-us{g.digits(2)}")],
    "shopify_token": [
        lambda g: put("shop token {}", j("shp", "at_") + g.s(HEX, 32)),
        lambda g: put("shared secret {}", j("shp", "ss_") + g.s(HEX, 32)),
    ],
    "atlassian_token": [lambda g: put("JIRA_API_TOKEN={}", j("ATA", "TT3") + g.s(URLSAFE + "=", 186))],
    "digitalocean_token": [lambda g: put("doctl auth init -t {}", j("do", "p_v1_") + g.s(HEX, 64))],
    "discord_bot_token": [
        lambda g: put("client.run('{}')", f"M{g.s(ALNUM, 23)}.{g.s(URLSAFE, 6)}.{g.s(URLSAFE, 38)}"),
    ],
    "telegram_bot_token": [
        lambda g: put("bot = Bot(token) # {}", f"{g.digits(10)}:AA{g.s(URLSAFE, 33)}"),
        lambda g: put("https://api.telegram.org/bot{}/getMe", f"{g.digits(9)}:AA{g.s(URLSAFE, 33)}"),
    ],
    "databricks_token": [lambda g: put("DATABRICKS_TOKEN={}", j("da", "pi") + g.s(HEX, 32))],
    "doppler_token": [lambda g: put("doppler {}", j("dp.", "pt.") + g.s(ALNUM, 43))],
    "linear_key": [lambda g: put("linear {}", j("lin", "_api_") + g.s(ALNUM, 40))],
    "postman_key": [lambda g: put("postman {}", j("PM", "AK-") + f"{g.s(HEX, 24)}-{g.s(HEX, 34)}")],
    "pulumi_token": [lambda g: put("PULUMI_ACCESS_TOKEN={}", j("pu", "l-") + g.s(HEX, 40))],
    "grafana_token": [lambda g: put("grafana {}", j("gl", "sa_") + f"{g.s(ALNUM, 32)}_{g.s(HEX, 8)}")],
    "sentry_token": [lambda g: put("sentry {}", j("sntr", "yu_") + g.s(HEX, 64))],
    "hashicorp_token": [
        lambda g: put("VAULT_TOKEN={}", j("hv", "s.") + g.s(URLSAFE, 95)),
        lambda g: put("terraform {}", g.s(ALNUM, 14) + j(".atlas", "v1.") + g.s(URLSAFE, 67)),
    ],
    "age_secret_key": [lambda g: put("# age key\n{}", j("AGE-SECRET-", "KEY-1") + g.s(BECH32, 58))],
    "square_token": [lambda g: put("square {}", j("EA", "AA") + g.s(URLSAFE, 60))],
    "heroku_key": [lambda g: put("heroku {}", j("HR", "KU-AA") + g.s(URLSAFE, 58))],
    "ai_provider_key": [
        lambda g: put("GROQ_API_KEY={}", j("gs", "k_") + g.s(ALNUM, 52)),
        lambda g: put("replicate {}", j("r", "8_") + g.s(ALNUM, 37)),
        lambda g: put("perplexity {}", j("pp", "lx-") + g.s(ALNUM, 48)),
    ],
    "notion_token": [lambda g: put("notion {}", j("nt", "n_") + g.digits(11) + g.s(ALNUM, 35))],
    "sendinblue_key": [lambda g: put("brevo {}", j("xkey", "sib-") + f"{g.s(HEX, 64)}-{g.s(ALNUM, 16)}")],
    "onepassword_token": [lambda g: put("OP_SERVICE_ACCOUNT_TOKEN={}", j("ops", "_eyJ") + g.s(B64, 300))],
    "jwt": [lambda g: put("session cookie {}", _jwt(g))],
    "bearer_token": [
        lambda g: put("Authorization: Bearer {}", g.s(URLSAFE + ".~", 40)),
        lambda g: put("curl -H 'authorization: bearer {}' https://api.example.com", g.s(ALNUM, 32)),
    ],
    "basic_auth": [lambda g: put("Authorization: Basic {}", b64(f"deploy:{g.password()}"))],
    "url_password": [
        lambda g: put("DATABASE_URL=postgresql://app:{}@db.internal:5432/prod", g.password()),
        lambda g: put("redis://:{}@cache:6379/0", g.s(ALNUM, 24)),
    ],
    "connection_password": [
        lambda g: put("Server=db;User Id=sa;Password={};", g.password()),
        lambda g: put("password = {}", g.password()),
        lambda g: put('{"user": "app", "password": "{}"}', g.password()),
        lambda g: put("database:\n  password: {}\n", g.password()),
        lambda g: put("export DB_PASSWORD={}", g.password()),
    ],
    "env_secret": [
        lambda g: put("export DEPLOY_TOKEN={}", g.s(ALNUM, 32)),
        lambda g: put('API_KEY = "{}"', g.s(ALNUM, 40)),
        lambda g: put('{"client_secret": "{}"}', g.s(URLSAFE, 40)),
        lambda g: put("  apiKey: '{}'", g.s(ALNUM, 24)),
        lambda g: put("SECRET_KEY={}", g.s(ALNUM, 1) + g.s(ALNUM + "!@#%^&*", 49)),
    ],
    "password_in_prose": [
        lambda g: put("btw the root password is {} — change it later", g.password()),
        lambda g: put("The password for the NAS is `{}`.", g.password()),
        lambda g: put("공유기 비밀번호는 {} 입니다", g.password()),
    ],
    "encoded_secret": [
        lambda g: put("config blob: {}", b64(ANTHROPIC_PREFIX + g.s(URLSAFE, 93) + "AA")),
        lambda g: put("{}", b64("token=" + j("gh", "p_") + g.s(ALNUM, 36))),
    ],
    "high_entropy_secret": [
        lambda g: put("my api key is {}", g.s(ALNUM, 32)),
        lambda g: put("인증 토큰: {}", g.s(ALNUM, 40)),
        lambda g: put("the webhook secret → {}", g.s(URLSAFE, 28)),
    ],
}


def examples(seed: int, per_shape: int = 2) -> list[Example]:
    """`per_shape` random instances of every shape."""
    gen = Gen(seed)
    out: list[Example] = []
    for kind, shapes in SHAPES.items():
        for shape in shapes:
            for _ in range(per_shape):
                text, secret = shape(gen)
                out.append((kind, text, secret))
    return out
