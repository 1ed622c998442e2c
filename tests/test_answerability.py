"""Answerability: each hit's confidence and the decision to abstain, on real projects.

Real SQLite files, the bundled encoder (``real_encoder``), ``Project.search`` as every face
calls it. The two examples of the issue must behave; small projects must answer natural
questions about what they hold and abstain on people, tools and attributes they do not.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from conftest import make_repo
from jupymem.config import Settings
from jupymem.core.opening import init_project
from jupymem.core.project import Project
from jupymem.retrieval import answerable, signals, wording


def _project(path: Path, statements: list[str], settings: Settings, *, dense: bool) -> Project:
    proj = init_project(make_repo(path), settings)
    proj.remember_many({"statement": s, "kind": "fact"} for s in statements)
    if dense:
        assert proj.prepare_dense(timeout=60).dense == "on"
    return proj


MODES = ("lexical", "hybrid")


@pytest.fixture
def settings(real_encoder: str | None) -> Settings:
    return Settings.from_env()


# -- the two examples -------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_a_natural_question_about_the_only_memory_is_answered(tmp_path: Path, settings: Settings, mode: str) -> None:
    """Lexical mode is what a search runs before the dense leg can: "ages" reaches "age" there
    through answerability's singular/plural match, since BM25's prefix cannot."""
    proj = _project(tmp_path / "r", ["Impute age with the median of its cohort; dropping rows biases churn low."],
                    settings, dense=mode == "hybrid")
    result = proj.search("what do we do about missing ages?", mode=mode)
    assert result.status == "ok", result
    assert result.hits[0].confidence >= answerable.ANSWER_AT
    assert ("dense" in result.legs) == (mode == "hybrid")
    assert proj.search("how do I request a new laptop?", mode=mode).abstained


def test_the_default_search_answers_it_before_the_dense_leg_can(tmp_path: Path, settings: Settings) -> None:
    """Every face searches in "hybrid" mode; a one-shot command (and a kernel while the
    encoder loads) has no dense leg then, and must take the small-project path all the same."""
    one_shot = dataclasses.replace(settings, interactive=False, encoder="none")
    proj = _project(tmp_path / "r", ["Impute age with the median of its cohort; dropping rows biases churn low."],
                    one_shot, dense=False)
    result = proj.search("what do we do about missing ages?")
    assert "dense" not in result.legs
    assert result.status == "ok", result
    assert proj.search("how do I request a new laptop?").abstained


@pytest.mark.parametrize("mode", MODES)
def test_an_attribute_memory_never_states_abstains(tmp_path: Path, settings: Settings, mode: str) -> None:
    proj = _project(tmp_path / "r", ["Lena Park reviews every change to the pricing model."], settings,
                    dense=mode == "hybrid")
    assert proj.search("what is Lena Park's email?", mode=mode).abstained
    assert proj.search("what is Lena Park's phone number?", mode=mode).abstained
    assert proj.search("what does Lena Marsh review?", mode=mode).abstained  # shares a first name
    found = proj.search("who reviews changes to the pricing model?", mode=mode)
    # "strong" and "likely" are kept for what is right 90% / 60% of the time on every held-out
    # family (STRONG, LIKELY: benchmarks/answerability.md); a one-memory project's match need
    # not reach them, but it is an answer.
    assert not found.abstained and found.hits[0].confidence >= answerable.ANSWER_AT
    assert not proj.search("what does Lena Park review?", mode=mode).abstained


@pytest.mark.parametrize("mode", MODES)
def test_names_count_however_the_question_spells_them(tmp_path: Path, settings: Settings, mode: str) -> None:
    """People type lower case into a search box, and a name can start the question: the
    names memory writes are names in the query all the same."""
    proj = _project(tmp_path / "r", ["Lena Park reviews every change to the pricing model."], settings,
                    dense=mode == "hybrid")
    swapped_name = ("what does lena marsh review?", "WHAT DOES LENA MARSH REVIEW?", "what does tom park review?")
    for q in ("what is lena park's email?", "lena's email?", "Lena's email?", "What Is Lena Park's Email?",
              *swapped_name):
        assert proj.search(q, mode=mode).abstained, q
    for q in ("what does lena park review?", "who reviews changes to the pricing model?", "lena park pricing",
              "Who Reviews Changes To The Pricing Model?", "WHAT DOES LENA PARK REVIEW?"):
        assert not proj.search(q, mode=mode).abstained, q


# -- a small project ------------------------------------------------------------------------

TEAM = [
    "Weekly sales forecasts are published every Tuesday morning on the planning dashboard.",
    "Greta Olsen owns the demand planning notebooks and reviews every new feature.",
    "We measure forecast accuracy with WAPE per store and category, never MAPE.",
    "Promotions come from the marketing calendar, exported each Friday to data/promos.csv.",
    "New stores borrow the profile of their cluster for their first eight weeks.",
    "Never train on the lockdown weeks of 2020; they are flagged in config/exclusions.yaml.",
]
ANSWERABLE = [
    ("when do the weekly forecasts come out?", 0),
    ("who looks after the demand planning notebooks?", 1),
    ("which error metric do we report for the forecast?", 2),
    ("where does the promotion calendar come from?", 3),
    ("how do we forecast a store that just opened?", 4),
    ("should the 2020 lockdown weeks be used for training?", 5),
    ("how often is the marketing calendar exported?", 3),  # a value: "each Friday"
]
# People and attributes it does not hold. (A known miss, in the README: a swapped topic word
# the encoder finds close, "who owns the *pricing* notebooks?".)
UNANSWERABLE = [
    "what is Greta Olsen's email address?",
    "what is Greta Olsen's phone number?",
    "what does Greta Lindberg own?",
    "which notebooks does Tom Olsen own?",
]


@pytest.mark.parametrize("mode", MODES)
def test_a_small_project_answers_what_it_holds_and_abstains_on_what_it_does_not(
    tmp_path: Path, settings: Settings, mode: str
) -> None:
    proj = _project(tmp_path / "r", TEAM, settings, dense=mode == "hybrid")
    answered = [q for q, i in ANSWERABLE if (r := proj.search(q, mode=mode)).status == "ok"
                and TEAM[i] in [h.memory.statement for h in r.hits[:3]]]
    assert len(answered) >= len(ANSWERABLE) - 1, set(q for q, _ in ANSWERABLE) - set(answered)
    asked = UNANSWERABLE
    wrongly = [q for q in asked if not proj.search(q, mode=mode).abstained]
    assert not wrongly, wrongly


# A value no memory states: WAPE is named, no figure is (the reading's "valued"); the same
# kind of question about a value memory does state is answered. The words alone and the
# transformer read it; the static tier does not (README, "Retrieval, measured").
@pytest.mark.parametrize("mode", ("lexical", "transformer"))
def test_a_value_no_memory_states_is_not_answered_by_one_that_names_it(
    tmp_path: Path, transformer_encoder: None, mode: str
) -> None:
    memories = [TEAM[2], "Greta Olsen owns the demand planning notebooks.", TEAM[3]]
    proj = _project(tmp_path / "r", memories, Settings.from_env(), dense=mode == "transformer")
    assert mode == "lexical" or proj.dense_status().tier == "transformer"
    for query in ("what is the WAPE of the latest forecast?", "how many stores does the WAPE cover?"):
        result = proj.search(query, mode=mode)
        assert result.abstained, (query, result.hits[:1])
        named = next(c for c in proj.explain(query, 3, mode=mode).candidates if "WAPE" in c.memory.statement)
        assert named.reading.wants_missed == "amount" and named.confidence < answerable.ANSWER_AT
    answered = proj.search("how often is the marketing calendar exported?", mode=mode)
    assert answered.status == "ok" and answered.hits[0].memory.statement == TEAM[3]


# A name held in part ("Tom Park" against "Ask Tom ..."): the first name alone is someone
# else's when memory writes the family name only beside another name (Lena Park), and is no
# answer then, in every mode; where memory also writes "Tom Park", the same note answers.
@pytest.mark.parametrize("mode", ("lexical", "transformer"))
def test_a_first_name_alone_is_no_answer_about_someone_memory_knows_by_another(
    tmp_path: Path, transformer_encoder: None, mode: str
) -> None:
    note = "Ask Tom before changing region_type in crm.clean_stock; downstream reports depend on it."
    query = "which changes does Tom Park review?"
    others = ["Lena Park reviews every change to the pricing model.", "The pricing model is retrained every quarter."]
    proj = _project(tmp_path / "a", [*others, note], Settings.from_env(), dense=mode == "transformer")
    read = next(c for c in proj.explain(query, 5, mode=mode).candidates if c.memory and c.memory.statement == note)
    assert read.reading.names_partial == ("tom park",), read.reading
    assert read.confidence < answerable.ANSWER_AT
    known = [*others, "Tom Park approves changes to region types.", note]
    proj = _project(tmp_path / "b", known, Settings.from_env(), dense=mode == "transformer")
    read = next(c for c in proj.explain(query, 5, mode=mode).candidates if c.memory and c.memory.statement == note)
    assert read.reading.names_partial == (), read.reading


SWAPPED_FIRST_NAME = ("which notebooks does Tom Olsen own?",)


# A name whose other half the memory writes with another is someone else: the verdict's
# reading (retrieval/reading.py) holds such a hit below the answer threshold in every mode,
# the words alone included, whatever the fitted model says.
@pytest.mark.parametrize(("memories", "query"), [
    (["Lena Park reviews every change to the pricing model."], "what does Lena Marsh review?"),
    (["Lena Park reviews every change to the pricing model."], "what does lena marsh review?"),
    (["Lena Park reviews every change to the pricing model."], "WHAT DOES LENA MARSH REVIEW?"),
    (["Lena Park reviews every change to the pricing model."], "what does tom park review?"),
    *((TEAM, q) for q in SWAPPED_FIRST_NAME),
])
def test_a_swapped_name_in_a_small_project_abstains_lexically(
    tmp_path: Path, settings: Settings, memories: list[str], query: str
) -> None:
    proj = _project(tmp_path / "r", memories, settings, dense=False)
    assert proj.search(query, mode="lexical").abstained


# -- confidence ---------------------------------------------------------------------------------


def test_every_hit_carries_a_confidence_in_order_of_words(tmp_path: Path, settings: Settings) -> None:
    proj = _project(tmp_path / "r", TEAM, settings, dense=True)
    result = proj.search("forecast accuracy metric per store", limit=6)
    assert result.hits and all(0.0 <= h.confidence <= 1.0 for h in result.hits)
    assert result.hits[0].confidence >= answerable.ANSWER_AT
    assert result.to_dict()["hits"][0]["confidence"] == result.hits[0].confidence
    assert answerable.ANSWER_AT <= answerable.LIKELY <= answerable.STRONG < 1.0
    assert answerable.level(answerable.STRONG) == "strong" and answerable.level(0.2) == "weak"
    if answerable.LIKELY < answerable.STRONG:
        assert answerable.level(answerable.LIKELY) == "likely"
    if answerable.ANSWER_AT < answerable.LIKELY:  # an answer the calibration does not call likely
        assert answerable.level(answerable.ANSWER_AT) == "weak"


def test_explain_shows_the_signals_behind_a_confidence(tmp_path: Path, settings: Settings) -> None:
    proj = _project(tmp_path / "r", TEAM, settings, dense=True)
    ranking = proj.explain("what is Greta Olsen's email address?", 3)
    top = ranking.candidates[0]
    signals = top.signals._asdict()
    assert signals["attribute_missed"] == 1.0  # she is named, her email is not
    assert top.confidence < answerable.ANSWER_AT


# -- the signals, one by one --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "salient"),
    [
        ("what is Lena Park's email?", ["lena", "park"]),
        ("is custmer_id unique in df_sales?", ["custmer", "id", "df", "sales"]),
        ("what is special about meter 4471 on the GPU box?", ["4471", "gpu"]),
        ("Who owns the ETL job?", ["etl"]),  # a capital that starts a sentence names nothing
        # In Title Case or in capitals, capitals name nothing: identifiers and numbers still do.
        ("Who Owns The Demand Planning Notebooks?", []),
        ("WHAT IS SPECIAL ABOUT METER 4471 IN DF_SALES?", ["4471", "df", "sales"]),
        ("Impact of Statins on the Risk of Cancer", []),
        ("What does Lena Park review?", ["lena", "park"]),  # two names are not a title
    ],
)
def test_salient_words(text: str, salient: list[str]) -> None:
    assert wording.salient_words(text) == salient


def test_other_languages_capitalise_nouns_so_only_codes_are_salient() -> None:
    assert wording.salient_words("Welche Zeitzone haben die Zeitstempel im Warehouse?", english=False) == []
    assert wording.salient_words("Wie viele GPUs hat das Team?", english=False) == ["gpus"]


def test_the_names_a_memory_writes_and_who_stands_beside_whom() -> None:
    words = {"lena", "park", "reviews", "pricing", "scores", "monday", "utc", "crm", "team", "weekly", "data",
             "greta", "olsen", "etl", "jose", "ready"}
    assert wording.names("Lena Park reviews every change to the pricing model.", words) == {"lena": {1}, "park": {-1}}
    got = wording.names("Scores are ready on Monday at 06:00 UTC; the CRM team reads them. Weekly runs.", words)
    assert got == {"monday": set(), "utc": set(), "crm": set()}  # "Scores", "Weekly" start sentences
    assert wording.names("The Data Team. Greta Olsen owns it.", words) == {
        "data": {1}, "team": {-1}, "greta": {1}, "olsen": {-1}}  # no name across a full stop
    assert wording.names("The ETL failed on 2024-02-29.", words) == {"etl": set()}  # "The" names nothing
    assert wording.names("We ask José Núñez, or ETL-Ops.", words) == {"jose": {1}}  # folded; a part of a word is not it
    assert wording.names("Lena Park reviews it.", {"reviews"}) == {}  # only names, only the wanted
    before: dict[str, set[str]] = {}  # the name written just before each: a family name's given name
    wording.names("Lena Park crossed the Huguenot Memorial Bridge.", {"park", "huguenot", "lena"}, before)
    assert before == {"park": {"lena"}}


def test_the_attribute_asked_of_a_name() -> None:
    assert wording.attribute_words("what is Lena Park's email?") == ["email"]
    assert wording.attribute_words("What is Lucía’s phone extension?") == ["phone"]
    assert wording.attribute_words("what does the model's threshold do?") == []


@pytest.mark.parametrize(
    ("text", "wanted"),
    [
        ("Who reviews the pricing model?", "name"),
        ("how many trees does the model have?", "amount"),
        ("how often is it retrained?", "amount"),
        ("when was the dashboard created?", "time"),
        ("when should lag features be computed?", None),  # a condition, not a time
        ("what does the ETL write?", None),
        ("Which version of Optuna do we use?", "version"),
        ("What is the memory limit of the shared kernel?", "amount"),
    ],
)
def test_what_a_question_asks_for(text: str, wanted: str | None) -> None:
    assert wording.wanted_type(text) == wanted


def test_what_a_how_many_question_counts_and_what_a_memory_s_numbers_count() -> None:
    from jupymem.retrieval import lexical

    assert wording.counted_words("how many stores have a catchment?") == ("stores",)
    assert wording.counted_words("How many of the stores are open?") == ("stores",)
    assert wording.counted_words("how many new hires joined in May?") == ("new", "hires", "joined")
    assert wording.counted_words("how much memory does it get?") == ()  # an amount, not a count
    assert wording.counted_words("what is the lift?") == ()

    def after(text: str) -> list[str]:
        return wording.counted_after(lexical.tokens(text))

    assert after("Stores with fewer than 52 weeks of history get the average.") == ["weeks", "history", "average", "fewer"]
    assert after("They comprise about 3.18 million of the people.") == ["people", "comprise"]
    assert after("The forecast covers 1,200 stores in six countries.") == ["stores", "countries", "covers"]
    assert after("Store count: 1200") == ["count"]
    assert after("I have three kids.") == ["kids"]
    assert after("Nothing is counted here.") == []


# A "how many" question against memories whose numbers count something else; the memory that
# counts it answers, and so does one that counts it in other words (by meaning). The transformer
# reads it (and the static tier); the words alone cannot tell "kids" from something else, and
# do not (benchmarks/verdict_suites.py chose it leave one family out).
def test_a_count_of_something_else_is_no_answer(tmp_path: Path, transformer_encoder: None) -> None:
    from jupymem.retrieval import reading

    mode = "transformer"
    other = "Stores with fewer than 52 weeks of history get the cluster average forecast."
    memories = [other, "Smart meter readings arrive every 15 minutes in UTC.", "The forecast covers six countries."]
    proj = _project(tmp_path / "r", memories, Settings.from_env(), dense=True)
    assert reading.settings(True, "transformer")["counted"]
    result = proj.search("how many stores are there?", mode=mode)
    assert result.abstained, result.hits[:1]
    read = next(c for c in proj.explain("how many stores are there?", 3, mode=mode).candidates
                if c.memory and c.memory.statement == other)
    assert read.reading.counted is not None and read.reading.counted < 0.35
    answered = proj.search("how many countries does the forecast cover?", mode=mode)
    assert answered.status == "ok" and answered.hits[0].memory.statement == memories[2]
    proj.remember_many([{"statement": "Melanie: I have three kids and a dog.", "kind": "fact"}])
    assert proj.prepare_dense(timeout=60).tier == "transformer"
    assert proj.search("how many children does Melanie have?", mode=mode).status == "ok"


# "who ..." asked of a memory that says who by no name and no role, and lacks what the
# question asks of them: no answer with the transformer; a memory that says who by a role,
# or by a name at the start of its sentence, answers.
def test_who_is_answered_by_a_name_or_a_role_and_not_by_a_memory_that_says_neither(
    tmp_path: Path, transformer_encoder: None
) -> None:
    memories = [
        "Store catchments are 15-minute drive-time polygons from OSRM, not radius circles.",
        "Jonas built the first version of the feature store client and is the person to ask about it.",
        "The nightly ETL writes to warehouse.orders_clean.",
    ]
    proj = _project(tmp_path / "r", memories, Settings.from_env(), dense=True)
    assert proj.search("who built the catchment polygons?", mode="transformer").abstained
    answered = proj.search("who knows about the caching in the feature client?", mode="transformer")
    assert answered.status == "ok" and answered.hits[0].memory.statement == memories[1]
    assert wording.names_someone("the platform team owns it") and not wording.names_someone("It runs nightly.")


@pytest.mark.parametrize("mode", ("lexical", "transformer"))
def test_a_memory_that_reports_the_question_does_not_answer_it(
    tmp_path: Path, transformer_encoder: None, mode: str
) -> None:
    # A note that someone asked is not the answer: it holds every word of the question, a
    # number ("thread 7") read as a time, and took it at 0.98 (a teammate's sixty such
    # notes answered the question on every clone). A "when" clause that answers, and a
    # question that comes with its answer, still answer.
    echo = "Churn model retrained? Someone asked when the churn model is retrained, in planning thread 7."
    memories = [
        echo,
        "Retrain the fraud model when its weekly AUC drops below 0.7.",
        "Nobody knows who owns the legacy invoice export; Lena asked in March.",
        "Sales figures are reported net of VAT and refunds.",
    ]
    proj = _project(tmp_path / "r", memories, Settings.from_env(), dense=True)
    assert proj.search("When is the churn model retrained?", mode=mode).abstained
    assert proj.search("Who owns the legacy invoice export?", mode=mode).abstained
    answered = proj.search("When do we retrain the fraud model?", mode=mode)
    assert answered.status == "ok" and answered.hits[0].memory.statement == memories[1]
    proj.remember("The churn model is retrained on the first day of every month.", kind="fact")
    assert proj.prepare_dense(timeout=60).dense == "on"
    found = proj.search("When is the churn model retrained?", mode=mode)
    assert found.status == "ok"
    confident = [h.memory.statement for h in found.hits if h.confidence >= answerable.ANSWER_AT]
    assert confident == ["The churn model is retrained on the first day of every month."], found.hits
    assert wording.not_asking(echo) == "Churn model retrained? Someone  "
    assert wording.not_asking(memories[1]) == memories[1]
    assert signals._DOCUMENT_CHARS == answerable.DOCUMENT_CHARS  # documents are not read so


@pytest.mark.parametrize(
    ("text", "focus"),
    [
        ("What is the memory limit of the shared kernel?", ["memory", "limit"]),
        ("Which version of Optuna do we use?", ["version"]),
        ("which vendor supplies the barcode scanners?", ["vendor"]),
        ("How many agents work in the call centre?", ["agents"]),
        ("What salt does the pricing A/B test use?", ["salt"]),
        ("what happens with items that have no history?", []),  # a verb, not what is asked for
        ("how do we impute age?", []),
    ],
)
def test_the_noun_a_question_asks_for(text: str, focus: list[str]) -> None:
    assert wording.focus_words(text) == focus


def test_a_version_is_a_version_number_not_any_number(tmp_path: Path, settings: Settings) -> None:
    proj = _project(tmp_path / "r", ["Hyperparameters are tuned with Optuna for at most 100 trials.",
                                     "Optuna 3.6.1 is pinned in environment.yml."], settings, dense=False)
    ranking = proj.explain("Which version of Optuna do we use?", 3, mode="lexical")
    by_statement = {c.memory.statement: c.signals._asdict() for c in ranking.candidates}
    assert by_statement["Hyperparameters are tuned with Optuna for at most 100 trials."]["type_missed"] == 1.0
    assert by_statement["Optuna 3.6.1 is pinned in environment.yml."]["type_missed"] == 0.0


def test_a_swapped_word_ending_in_ing_counts_when_memory_knows_it(tmp_path: Path, settings: Settings) -> None:
    """"billing" is a word this project uses, so "the billing API" against "the CRM API" is
    a swap; "missing" in "missing ages" is a word no memory holds, a participle."""
    proj = _project(tmp_path / "r", ["Do not call the CRM API from notebooks; it has a rate limit of 10 requests.",
                                     "monthly_charges is in the customer's billing currency."], settings, dense=False)
    ranking = proj.explain("What is the rate limit of the billing API?", 3, mode="lexical")
    top = ranking.candidates[0].signals._asdict()
    assert "CRM API" in ranking.candidates[0].memory.statement and top["neighbour_swapped"] == 1.0
    one = _project(tmp_path / "s", ["Impute age with the median of its cohort."], settings, dense=False)
    ranking = one.explain("what do we do about missing ages?", 3, mode="lexical")
    assert ranking.candidates[0].signals._asdict()["neighbour_swapped"] == 0.0


def test_a_model_is_a_logistic_function_of_its_signals() -> None:
    model = answerable.Model(("a", "b"), (2.0, -1.0), -1.0)
    assert model.confidence([0.5, 0.0]) == pytest.approx(0.5)
    assert model.confidence([3.0, 0.0]) > 0.99 and model.confidence([0.0, 3.0]) < 0.02
    assert model.confidence([1e9, 0.0]) <= 1.0  # never overflows


# -- "what is the current X" ----------------------------------------------------------------------

NOW = [
    "We are currently migrating the notebooks to the new cluster.",
    "The churn model's learning rate is 0.05.",
    "The GPU quota is two A10 cards per team.",
]


@pytest.mark.parametrize("mode", MODES)
def test_the_current_value_wins_over_a_memory_that_merely_says_currently(
    tmp_path: Path, settings: Settings, mode: str
) -> None:
    proj = _project(tmp_path / "r", NOW, settings, dense=mode == "hybrid")
    old = next(m for m in proj.list() if "0.05" in m.statement)
    new = proj.supersede(old.id, "The churn model's learning rate is 0.02 since the March retrain.")
    result = proj.search("what is the current learning rate?", mode=mode)
    assert result.hits[0].memory.id == new.id, result
    assert old.id not in [h.memory.id for h in result.hits]  # superseded: out of default search
    past = proj.search("what is the current learning rate?", mode=mode, include_inactive=True)
    ids = [h.memory.id for h in past.hits]
    assert ids[0] == new.id and old.id in ids  # history asked for: the original is found, after
    assert proj.search("learning rate 0.05", mode=mode, include_inactive=True).hits[0].memory.id == old.id
    assert "currently" in proj.search("currently", mode=mode).hits[0].memory.statement  # alone, it is a word


def test_now_words_leave_the_query_only_when_others_remain() -> None:
    from jupymem.retrieval.retrieve import without_now_words

    text, now = without_now_words("what is the current learning rate?")
    assert text.split() == ["what", "is", "the", "learning", "rate?"] and now
    assert without_now_words("Currently?") == ("Currently?", True)
    assert without_now_words("learning rate") == ("learning rate", False)


def test_documents_and_statements_have_their_own_models() -> None:
    assert answerable.band(5, 5_000) == "small"  # every memory of a small project is a candidate
    assert answerable.band(50, 180) == "large"
    assert answerable.band(50, answerable.DOCUMENT_CHARS) == "document"
    assert answerable.model_for(hybrid=True, band="document") is not answerable.model_for(hybrid=True, band="large")


def test_the_plain_fts_baseline_ranks_and_never_abstains(tmp_path: Path, settings: Settings) -> None:
    """It is measured as a ranking: our abstention would only take its hits away."""
    proj = _project(tmp_path / "r", ["Lena Park reviews every change to the pricing model."], settings, dense=False)
    assert proj.search("what is Lena Park's email?", mode="lexical").abstained
    plain = proj.search("what is Lena Park's email?", mode="fts")
    assert plain.status == "ok" and plain.legs == ("fts",) and len(plain.hits) == 1
    assert proj.search("kubernetes namespace", mode="fts").abstained  # no word of it in memory


# A place memory never writes, one letter from a name it does ("Berlin", "Merlin"): a word of
# the language (the bundled encoder's word list) is not taken for a typo, so the question is
# not answered from Merlin Okafor's note, and the verdict reads the word as written. A name
# not in that list is still fixed ("Dunlyn" -> "dunlin"), and a memory that lacks the fix
# lacks a word the question wrote that no memory holds (``Reading.guessed``).
def test_a_place_no_memory_holds_is_not_read_as_the_typo_of_a_name_it_does(
    tmp_path: Path, transformer_encoder: None
) -> None:
    from jupymem.retrieval import answerable, fuzzy, reading

    memories = [
        "The São Paulo office opened in 2022 to support the Latin American logistics business.",
        "Desks in the Leeds office are booked through an app; about 300 are available each day.",
        "Customer service is open from eight until eight on weekdays and until four on Saturdays.",
        "Merlin Okafor maintains the nightly job that scores supplier invoices for fraud.",
        "Project Dunlin forecasts parcel volumes for the depots.",
        "The company employs about 3,200 people, of whom about 120 work in data roles.",
    ]
    proj = _project(tmp_path / "r", memories, Settings.from_env(), dense=True)
    # A name no memory holds, however close the rest of the question comes ("lone_names");
    # not a word in capitals, which may be an acronym memory spells out, or emphasis.
    for mode in ("lexical", "transformer"):
        assert proj.search("How many people work in the Berlin office?", mode=mode).abstained, mode
        assert proj.search("How many people does the company employ?", mode=mode).status == "ok", mode
    assert wording.capitalised("is NEAR the Berlin office") == {"berlin"}
    ranking = proj.explain("How many people work in the Berlin office?", 3, mode="transformer")
    staff = next(c for c in ranking.candidates if c.memory and c.memory.statement == memories[5])
    assert staff.reading.names_unknown == ("berlin",)
    assert reading.settings(True, "transformer")["lone_names"]
    assert reading.unaccounted(staff.reading, band=answerable.band(ranking.active, len(memories[5])), hybrid=True,
                               tier="transformer", signals=staff.signals) == "no memory holds the name 'berlin'"
    assert "berlin" in fuzzy.dictionary() and "dunlyn" not in fuzzy.dictionary()
    question = "When did the Berlin office open?"
    assert proj.search(question, mode="transformer").abstained
    ranking = proj.explain(question, 3, mode="transformer")
    why = [reading.unaccounted(c.reading, band=answerable.band(ranking.active, len(c.memory.statement)),
                               hybrid=True, tier="transformer", signals=c.signals)
           for c in ranking.candidates if c.memory]
    assert all(w and "'berlin'" in w for w in why), why
    guessed = proj.explain("When did the Dunlyn office open?", 3, mode="transformer").candidates
    office = next(c for c in guessed if c.memory and c.memory.statement == memories[0])
    assert office.reading.guessed == (("dunlin", "dunlyn"),)
    assert ("dunlin", False) in [(word, known) for word, *_, known in office.reading.lacking]
    typo = proj.search("When did the Sao Paulo offfice open?", mode="transformer")
    assert typo.status == "ok" and typo.hits[0].memory.statement == memories[0]
