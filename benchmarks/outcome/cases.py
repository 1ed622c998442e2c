"""The outcome benchmark's cases and their checkers, written before any answer was read.

Two sets, both scored on the code of an answer (its fenced code blocks, comments
removed, so that a lesson repeated as a comment does not count as applied):

* **Lesson cases** (40): a lesson a data scientist records in this project, then a later
  request for code that the lesson should shape. ``applied``: every pattern must match
  the code, ``avoid``: none may. ``code``: the code asked for is there at all (the
  answer holds Python that parses and uses what was asked), whatever the lesson.
* **Harm cases** (20): requests no memory of the project applies to, each asking for
  one named pure-Python function with tests run against it in a separate interpreter.
  The answer must be as good with memory as without: memory that misleads (an
  answer that repeats a memory, reads the block as data, or applies a lesson that does
  not fit) fails the tests.

The split into a fit part and a held-out part (``part``) is made from a hash of each
id, fixed here with the cases, before any presentation was compared: presentations
are chosen on ``fit`` and reported on ``heldout``.
"""

from __future__ import annotations

import ast
import hashlib
import io
import re
import subprocess
import sys
import tempfile
import tokenize
from dataclasses import dataclass


@dataclass(frozen=True)
class LessonCase:
    id: str
    kind: str
    topic: str
    lesson: str
    request: str
    applied: tuple[str, ...]  # regexes over the code; all must match
    code: tuple[str, ...]  # regexes: the code asked for is there
    avoid: tuple[str, ...] = ()  # regexes that must not match when applied


@dataclass(frozen=True)
class HarmCase:
    id: str
    request: str
    function: str
    tests: str  # Python run after the answer's code; must finish without error


L = LessonCase
LESSONS: tuple[LessonCase, ...] = (
    L("o-01", "correction", "shipments file",
      "data/raw/shipments.csv comes from the German ERP: read it with sep=';' and decimal=','.",
      "Load data/raw/shipments.csv into a DataFrame and show the mean of weight_kg.",
      (r"sep\s*=\s*['\"];['\"]",), (r"read_csv", r"weight_kg")),
    L("o-02", "correction", "clinic visits dates",
      "visit_date in clinic_visits.csv is written dd/mm/yyyy: parse it with dayfirst=True.",
      "Read clinic_visits.csv, convert visit_date to datetimes and count visits per month.",
      (r"dayfirst\s*=\s*True|%d/%m/%Y",), (r"to_datetime|parse_dates", r"visit_date")),
    L("o-03", "constraint", "reproducibility",
      "Every train_test_split and model in this repository takes random_state=42 so results reproduce.",
      "Split X and y into train and test sets with 20% for testing.",
      (r"random_state\s*=\s*42",), (r"train_test_split",)),
    L("o-04", "correction", "sensor temperature units",
      "temp_raw in sensor_readings is in tenths of a degree Celsius: divide it by 10 before any analysis.",
      "Plot the daily mean temperature from sensor_readings.parquet (the column is temp_raw).",
      (r"/\s*10(\.0?)?\b|\*\s*0?\.1\b",), (r"read_parquet", r"temp_raw")),
    L("o-05", "procedure", "intermediate tables",
      "Keep intermediate tables as parquet files under data/interim/, never as CSV.",
      "Save the cleaned DataFrame df_clean so that the next notebook can load it.",
      (r"to_parquet", r"data/interim"), (r"df_clean\.to_\w+",)),
    L("o-06", "correction", "crm customer_ref",
      "Read customer_ref in crm_export.xlsx as text (dtype={'customer_ref': str}): its leading zeros matter.",
      "Read crm_export.xlsx and merge it with the orders DataFrame on customer_ref.",
      (r"(dtype|converters)\s*=\s*\{[^}]*customer_ref[^}]*\bstr\b|dtype\s*=\s*str",), (r"read_excel", r"merge")),
    L("o-07", "preference", "report figures",
      "Figures for reports are saved with dpi=200 and bbox_inches='tight'.",
      "Make a bar chart of revenue by region from df and save it to reports/revenue.png.",
      (r"dpi\s*=\s*200",), (r"savefig", r"revenue\.png")),
    L("o-08", "correction", "web logs status codes",
      "status_code in web_logs is a string: compare it with '404', never with the number 404.",
      "Count the 404 errors per day in the web_logs DataFrame.",
      (r"['\"]404['\"]",), (r"status_code",), (r"==\s*404\b",)),
    L("o-09", "constraint", "missing prices",
      "Never fill missing prices with 0: drop those rows with dropna(subset=['price']).",
      "Handle the missing values in the price column of the products DataFrame, then compute the average price "
      "per category.",
      (r"dropna\([^)]*price",), (r"groupby",), (r"price['\"]\]?\.fillna|fillna\(\s*0",)),
    L("o-10", "decision", "clickstream files",
      "The clickstream files are too big for pandas: read them with polars (import polars as pl).",
      "Load data/clickstream/2024-06.parquet and count the events per session_id.",
      (r"\bpolars\b|\bpl\.",), (r"session_id", r"parquet")),
    L("o-11", "correction", "stations api",
      "The stations API nests its records under the 'data' key: build frames from payload['data'].",
      "Turn the JSON payload returned by the stations API (already in the variable payload) into a DataFrame.",
      (r"\[\s*['\"]data['\"]\s*\]|\.get\(\s*['\"]data['\"]",), (r"payload", r"DataFrame|json_normalize")),
    L("o-12", "constraint", "warehouse credentials",
      "Connect to the warehouse with create_engine(os.environ['WAREHOUSE_URL']); never write the connection "
      "string in a notebook.",
      "Write the code that queries the monthly_sales table of the warehouse into pandas.",
      (r"WAREHOUSE_URL",), (r"read_sql", r"monthly_sales")),
    L("o-13", "correction", "payments amounts",
      "amount_cents in payments is in cents: divide by 100 to get euros.",
      "Compute the total revenue per month from the payments DataFrame (columns amount_cents and paid_at).",
      (r"/\s*100\b",), (r"amount_cents", r"groupby|resample")),
    L("o-14", "correction", "store regions",
      "The region column of stores has trailing spaces: apply .str.strip() to it before grouping.",
      "Group the stores DataFrame by region and sum the sales.",
      (r"str\.strip\(\)",), (r"groupby", r"region")),
    L("o-15", "constraint", "fraud cross-validation",
      "Cross-validate the fraud model with StratifiedKFold (5 splits): fraud is 0.3% of rows.",
      "Set up cross-validation for the fraud classifier on X and y.",
      (r"StratifiedKFold",), (r"cross_val|\.split\(",)),
    L("o-16", "correction", "survey encoding",
      "survey_responses.csv is encoded in latin-1: read it with encoding='latin-1'.",
      "Load survey_responses.csv and show the value counts of the country column.",
      (r"encoding\s*=\s*['\"](latin-?1|iso-?8859-?1|cp1252)['\"]",), (r"read_csv", r"value_counts")),
    L("o-17", "procedure", "experiment tracking",
      "Log every model training run with mlflow: mlflow.start_run() and mlflow.log_metric.",
      "Train a random forest on X_train and y_train and report its accuracy on the test set.",
      (r"mlflow",), (r"RandomForest", r"accuracy")),
    L("o-18", "correction", "event timestamps",
      "ts in events.csv is Unix epoch milliseconds: convert with pd.to_datetime(..., unit='ms').",
      "Convert the ts column of the events DataFrame to datetimes.",
      (r"unit\s*=\s*['\"]ms['\"]",), (r"to_datetime",)),
    L("o-19", "constraint", "internal accounts",
      "Exclude internal test accounts (is_internal is True) before computing any user metric.",
      "Compute the daily active users from the sessions DataFrame (user_id, started_at).",
      (r"is_internal",), (r"user_id", r"nunique|unique|drop_duplicates")),
    L("o-20", "decision", "house prices target",
      "Model log1p(sale_price), not the raw price, in every house price regression.",
      "Fit a linear regression that predicts sale_price from the features in housing_df.",
      (r"log1p|np\.log\(",), (r"LinearRegression", r"sale_price")),
    L("o-21", "correction", "inventory sheet",
      "inventory.xlsx has a title row above its header: read it with skiprows=1.",
      "Read inventory.xlsx and list the items with a stock below 10.",
      (r"skiprows\s*=\s*(1|\[\s*0\s*\])|header\s*=\s*1",), (r"read_excel", r"<\s*10")),
    L("o-22", "correction", "lab missing codes",
      "lab_results.csv codes missing measurements as -999: read it with na_values=[-999].",
      "Load lab_results.csv and compute the mean of each measurement column.",
      (r"-999",), (r"read_csv", r"mean")),
    L("o-23", "correction", "product keys",
      "The products table names its SKU column sku_code, not sku.",
      "Join the sales DataFrame to the products DataFrame on the product SKU.",
      (r"sku_code",), (r"merge|join",)),
    L("o-24", "constraint", "sql parameters",
      "Queries take bound parameters (params=...), never f-strings: analysts paste ids from tickets.",
      "Write a function that fetches every order of one customer_id from the database with pandas.read_sql.",
      (r"params\s*=",), (r"read_sql", r"def "), (r"f['\"][^'\"]*(SELECT|select)[^'\"]*\{",)),
    L("o-25", "decision", "weekly reporting",
      "Weeks in this project start on Monday: resample weekly figures with 'W-MON'.",
      "Resample the daily orders series to weekly totals.",
      (r"W-MON",), (r"resample",)),
    L("o-26", "procedure", "feature scaling",
      "Scale features inside a scikit-learn Pipeline, never before the train/test split.",
      "Train a logistic regression on the churn features X and y, with feature scaling.",
      (r"Pipeline|make_pipeline",), (r"LogisticRegression",)),
    L("o-27", "preference", "csv outputs",
      "Write CSV outputs with index=False: the downstream loader breaks on an unnamed index column.",
      "Export the summary DataFrame to outputs/summary.csv.",
      (r"index\s*=\s*False",), (r"to_csv",)),
    L("o-28", "preference", "plot palette",
      "Every chart uses the colorblind-safe palette: sns.set_palette('colorblind').",
      "Draw a line plot of weekly sign-ups per channel with seaborn from the signups DataFrame.",
      (r"colorblind|viridis|cividis",), (r"lineplot|relplot",)),
    L("o-29", "correction", "lead emails",
      "Lead emails differ only by case: lowercase email (str.lower()) before counting unique leads.",
      "Count the unique leads per campaign in the leads DataFrame.",
      (r"\.lower\(\)",), (r"campaign", r"nunique|unique|drop_duplicates")),
    L("o-30", "decision", "delivery times",
      "Summarize delivery times with the median, not the mean: a few parcels lost for months skew the mean.",
      "Summarize the delivery time by carrier in the deliveries DataFrame (delivery_days, carrier).",
      (r"median",), (r"groupby", r"carrier")),
    L("o-31", "correction", "fx rates",
      "A row of fx_rates holds from its date until the next one: attach rates with pd.merge_asof on the date.",
      "Attach the exchange rate from the fx_rates DataFrame to each row of the transactions DataFrame by date.",
      (r"merge_asof",), (r"fx_rates", r"transactions")),
    L("o-32", "constraint", "shared server cores",
      "Use n_jobs=2 at most in scikit-learn and joblib: the shared server has 2 cores.",
      "Run a grid search over max_depth and n_estimators for a RandomForestClassifier on X and y.",
      (r"n_jobs\s*=\s*[12]\b",), (r"GridSearchCV",), (r"n_jobs\s*=\s*-1",)),
    L("o-33", "correction", "app logs",
      "The app log files are gzip-compressed without a .gz suffix: read them with compression='gzip'.",
      "Read the file logs/app_2024_06 (a CSV) into pandas.",
      (r"compression\s*=\s*['\"]gzip['\"]|gzip\.open",), (r"read_csv",)),
    L("o-34", "procedure", "device readings",
      "The gateway resends readings: drop duplicate (device_id, ts) rows before aggregating sensor data.",
      "Compute the hourly average reading per device from the readings DataFrame (device_id, ts, value).",
      (r"drop_duplicates",), (r"device_id", r"mean")),
    L("o-35", "correction", "postcodes",
      "Postcodes must be zero-padded to 5 digits (.str.zfill(5)) before joining to the geo table.",
      "Join the addresses DataFrame to the geo DataFrame on postcode.",
      (r"zfill\(\s*5\s*\)",), (r"merge|join",)),
    L("o-36", "constraint", "demand forecast validation",
      "Validate the demand forecast with TimeSeriesSplit, never with shuffled K-fold.",
      "Write the cross-validation loop for the demand forecasting model on X and y.",
      (r"TimeSeriesSplit",), (r"for |cross_val",), (r"shuffle\s*=\s*True",)),
    L("o-37", "correction", "household income",
      "Income in households.csv has thousands separators ('1,234'): read it with thousands=','.",
      "Load households.csv and compute the median Income per district.",
      (r"thousands\s*=\s*['\"],['\"]|replace\(\s*['\"],['\"]",), (r"read_csv", r"median")),
    L("o-38", "preference", "file paths",
      "Use pathlib.Path for file paths in this repository, never os.path or os.listdir.",
      "Write a function that lists all the CSV files in the data/raw folder.",
      (r"\bPath\b",), (r"def ", r"csv"), (r"os\.listdir|os\.path",)),
    L("o-39", "correction", "claims target",
      "The target column of the claims dataset is is_fraud; there is no column named fraud.",
      "Train a gradient boosting classifier on the claims DataFrame to predict fraud.",
      (r"is_fraud",), (r"GradientBoosting|XGB|LGBM|HistGradient",)),
    L("o-40", "constraint", "ticket ids",
      "Keep the id columns of tickets as pandas' nullable 'Int64', never float.",
      "Load tickets.csv and count the tickets per assignee_id.",
      (r"Int64",), (r"read_csv", r"assignee_id")),
)

H = HarmCase
HARMS: tuple[HarmCase, ...] = (
    H("h-01", "Write a Python function is_palindrome(s) that ignores case and every character that is not a letter.",
      "is_palindrome", "assert is_palindrome('A man, a plan, a canal: Panama')\nassert not is_palindrome('data')"),
    H("h-02", "Write a Python function fizzbuzz(n) that returns the list of FizzBuzz strings for 1..n "
      "('Fizz', 'Buzz', 'FizzBuzz' or the number as a string).",
      "fizzbuzz", "assert fizzbuzz(5) == ['1', '2', 'Fizz', '4', 'Buzz']\nassert fizzbuzz(15)[-1] == 'FizzBuzz'"),
    H("h-03", "Write a Python function flatten(items) that flattens arbitrarily nested lists into one flat list.",
      "flatten", "assert flatten([1, [2, [3, [4]]], 5]) == [1, 2, 3, 4, 5]\nassert flatten([]) == []"),
    H("h-04", "Write a Python function word_count(text) that returns a dict mapping each lowercase word to how "
      "often it occurs; words are separated by whitespace.",
      "word_count", "assert word_count('a b A') == {'a': 2, 'b': 1}"),
    H("h-05", "Write a Python function celsius_to_fahrenheit(c) that converts a temperature.",
      "celsius_to_fahrenheit", "assert abs(celsius_to_fahrenheit(100) - 212) < 1e-9\n"
      "assert abs(celsius_to_fahrenheit(-40) + 40) < 1e-9"),
    H("h-06", "Write a Python function merge_intervals(intervals) that merges overlapping [start, end] intervals "
      "and returns them sorted by start.",
      "merge_intervals", "r = merge_intervals([[1, 3], [2, 6], [8, 10]])\n"
      "assert [list(x) for x in r] == [[1, 6], [8, 10]]"),
    H("h-07", "Write a Python function chunks(seq, n) that splits a list into consecutive lists of length n "
      "(the last one may be shorter).",
      "chunks", "assert list(chunks([1, 2, 3, 4, 5], 2)) == [[1, 2], [3, 4], [5]]"),
    H("h-08", "Write a Python function count_vowels(s) that counts the vowels (a, e, i, o, u, either case) in a "
      "string.",
      "count_vowels", "assert count_vowels('Notebook') == 4\nassert count_vowels('xyz') == 0"),
    H("h-09", "Write a Python function second_largest(nums) that returns the second largest distinct number in a "
      "list.",
      "second_largest", "assert second_largest([3, 1, 4, 4, 2]) == 3"),
    H("h-10", "Write a Python function transpose(matrix) that transposes a list of lists.",
      "transpose", "assert [list(r) for r in transpose([[1, 2, 3], [4, 5, 6]])] == [[1, 4], [2, 5], [3, 6]]"),
    H("h-11", "Write a Python function rle_encode(s) that run-length encodes a string, e.g. 'aaabcc' becomes "
      "'a3b1c2'.",
      "rle_encode", "assert rle_encode('aaabcc') == 'a3b1c2'\nassert rle_encode('') == ''"),
    H("h-12", "Write a Python function is_prime(n) that tells whether an integer is prime.",
      "is_prime", "assert [n for n in range(20) if is_prime(n)] == [2, 3, 5, 7, 11, 13, 17, 19]"),
    H("h-13", "Write a Python function gcd(a, b) that returns the greatest common divisor of two positive "
      "integers with Euclid's algorithm.",
      "gcd", "assert gcd(48, 18) == 6\nassert gcd(7, 13) == 1"),
    H("h-14", "Write a Python function roman_to_int(s) that converts a Roman numeral to an integer.",
      "roman_to_int", "assert roman_to_int('MCMXCIV') == 1994\nassert roman_to_int('IX') == 9"),
    H("h-15", "Write a Python function dedupe_keep_order(items) that removes duplicates from a list and keeps the "
      "first occurrence of each item in order.",
      "dedupe_keep_order", "assert dedupe_keep_order([3, 1, 3, 2, 1]) == [3, 1, 2]"),
    H("h-16", "Write a Python function moving_average(values, k) that returns the list of the means of every "
      "window of k consecutive values.",
      "moving_average", "r = moving_average([1, 2, 3, 4], 2)\nassert [round(x, 6) for x in r] == [1.5, 2.5, 3.5]"),
    H("h-17", "Write a Python function parse_kv(line) that parses 'a=1;b=2' into the dict {'a': '1', 'b': '2'}.",
      "parse_kv", "assert parse_kv('a=1;b=2') == {'a': '1', 'b': '2'}"),
    H("h-18", "Write a Python function binary_search(items, target) that returns the index of target in a sorted "
      "list, or -1 when it is absent.",
      "binary_search", "assert binary_search([1, 3, 5, 7], 5) == 2\nassert binary_search([1, 3, 5, 7], 4) == -1"),
    H("h-19", "Write a Python function are_anagrams(a, b) that tells whether two words are anagrams of each other, "
      "ignoring case.",
      "are_anagrams", "assert are_anagrams('Listen', 'Silent')\nassert not are_anagrams('abc', 'abd')"),
    H("h-20", "Write a Python function parse_iso_week(s) that turns a week label like '2024-W05' into the tuple "
      "(2024, 5).",
      "parse_iso_week", "assert tuple(parse_iso_week('2024-W05')) == (2024, 5)"),
)

FIT_LESSONS = 16  # of 40; the other 24 are held out
FIT_HARMS = 8  # of 20; the other 12 are held out


def _order(case_id: str) -> str:
    return hashlib.sha256(("outcome-split-v1:" + case_id).encode()).hexdigest()


def part(case_id: str) -> str:
    """``fit`` or ``heldout``: fixed by a hash of the id, the same for every run."""
    pool = LESSONS if case_id.startswith("o-") else HARMS
    fit_n = FIT_LESSONS if case_id.startswith("o-") else FIT_HARMS
    ranked = sorted((c.id for c in pool), key=_order)
    return "fit" if case_id in ranked[:fit_n] else "heldout"


# -- reading an answer ---------------------------------------------------------------------

_FENCE = re.compile(r"```[ \t]*([\w+-]*)[^\n]*\n(.*?)(?:```|\Z)", re.S)


def code_of(answer: str) -> str:
    """The Python of an answer: its fenced blocks (python or unlabeled), comments removed."""
    blocks = [body for lang, body in _FENCE.findall(answer or "") if lang.lower() in ("", "python", "py", "python3")]
    return "\n".join(_without_comments(b) for b in blocks)


def _without_comments(code: str) -> str:
    try:
        tokens = [t for t in tokenize.generate_tokens(io.StringIO(code).readline) if t.type != tokenize.COMMENT]
        return tokenize.untokenize(tokens)
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return re.sub(r"(?m)^\s*#.*$", "", code)


def parses(code: str) -> bool:
    if not code.strip():
        return False
    try:
        ast.parse(code)
        return True
    except SyntaxError:
        return False


def lesson_verdict(case: LessonCase, answer: str) -> dict[str, bool]:
    """``code``: the code asked for is there; ``applied``: and it follows the lesson."""
    code = code_of(answer)
    has_code = parses(code) and all(re.search(p, code) for p in case.code)
    applied = (
        bool(code.strip())
        and all(re.search(p, code) for p in case.applied)
        and not any(re.search(p, code) for p in case.avoid)
    )
    return {"code": has_code, "applied": applied}


def harm_verdict(case: HarmCase, answer: str, timeout: float = 10.0) -> dict[str, bool]:
    """``code``: the function asked for is defined in Python that parses; ``passes``: its
    tests pass when the answer's code runs in a separate, isolated interpreter (in a
    temporary directory, killed after ``timeout`` seconds)."""
    code = code_of(answer)
    has_code = parses(code) and re.search(rf"def\s+{case.function}\s*\(", code) is not None
    if not has_code:
        return {"code": False, "passes": False}
    # Calls the answer makes at top level (print(...), examples) stay: they run too, as in a cell.
    program = code + "\n\n" + case.tests + "\n"
    with tempfile.TemporaryDirectory(prefix="outcome-harm-") as tmp:
        try:
            done = subprocess.run([sys.executable, "-I", "-c", program], cwd=tmp, capture_output=True,
                                  timeout=timeout, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            return {"code": True, "passes": False}
    return {"code": True, "passes": done.returncode == 0}
