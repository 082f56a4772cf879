"""Session-state keys, named once and prefixed by the page that owns them.

Widget keys are built from these constants too, so a test can set or read a
widget through ``at.session_state[KEY]`` without guessing. No key here ever
holds an API key except the password input itself (``evaluate.judge.api_key``
and ``runs.judge.api_key``), which is never displayed.
"""

from __future__ import annotations

#: The "Open another run" picker shown when the address names a run the database does not hold.
OTHER_RUN = "address.other_run"

# -- home ----------------------------------------------------------------
HOME_SAMPLE_JOB = "home.sample_job"

# -- upload --------------------------------------------------------------
#: Uploaded file as (file name, bytes); the file uploader fills it, tests may set it directly.
UPLOAD_FILE = "upload.file"
UPLOAD_UPLOADER = "upload.uploader"
UPLOAD_NAME = "upload.dataset_name"
UPLOAD_REPLACE = "upload.replace"
UPLOAD_FORMAT = "upload.format"
UPLOAD_LIST_FORMAT = "upload.list_format"
UPLOAD_DELIMITER = "upload.delimiter"
UPLOAD_NULL_REFERENCES = "upload.null_references"
UPLOAD_PAIR_BY_QUERY = "upload.pair_by_query"
UPLOAD_DEFAULT_MODEL = "upload.default_model"
UPLOAD_WIDE = "upload.wide_predictions"
UPLOAD_SAVED = "upload.saved_message"
UPLOAD_MANAGE = "upload.manage_dataset"
UPLOAD_RENAME = "upload.rename_to"
UPLOAD_CONFIRM_DELETE = "upload.confirm_delete"


def upload_field(name: str) -> str:
    """Widget key of the column chosen for one normalized field (id, model, query...)."""
    return f"upload.map.{name}"


# -- evaluate ------------------------------------------------------------
EVAL_DATASET = "evaluate.dataset"
EVAL_MODELS = "evaluate.models"
EVAL_JOB = "evaluate.job"
#: Repeated judging and a judge panel: samples per request, more member models (comma-separated), the cell's rule.
EVAL_SAMPLES = "evaluate.jury.samples"  # the jury form's inputs: jury_key(row name of JURY_SETTINGS)
EVAL_PANEL = "evaluate.jury.models"
EVAL_AGGREGATE = "evaluate.jury.aggregate"
#: Name of a dataset to preselect on the next visit (set by Upload after a save).
EVAL_PRESELECT = "evaluate.preselect"


def eval_metric(name: str) -> str:
    """Checkbox key of one metric."""
    return f"evaluate.metric.{name}"


def eval_param(metric: str, param: str) -> str:
    """Widget key of one metric parameter."""
    return f"evaluate.param.{metric}.{param}"


# -- judge settings (one form, shown on Evaluate and on Runs for resume) --
def judge_key(page: str, name: str) -> str:
    """Widget key of one judge setting on ``page`` ('evaluate' or 'runs')."""
    return f"{page}.judge.{name}"


#: The judge profile picked (one for every page that asks a judge), the settings typed last, a save's message.
JUDGE_PROFILE = "judge.profile"
JUDGE_LAST = "judge.last_settings"
JUDGE_SAVED = "judge.saved_message"
NO_PROFILE = "(none: the settings below)"


def jury_key(name: str) -> str:
    """Widget key of one repeated-judging/panel setting on Evaluate."""
    return f"evaluate.jury.{name}"


# -- runs ----------------------------------------------------------------
RUNS_SELECTED = "runs.selected"
RUNS_JOB = "runs.job"
RUNS_EXPORT_TABLE = "runs.export_table"
RUNS_EXPORT_FORMAT = "runs.export_format"
RUNS_CONFIRM_DELETE = "runs.confirm_delete"
#: The message left after a run was deleted, shown once at the top of the page.
RUNS_DELETED = "runs.deleted_message"
#: "Add metrics" on the Runs page: the metrics picked, and its button.
RUNS_ADD_METRICS = "runs.add.metrics"
RUNS_ADD_GO = "runs.add.go"


def runs_add_param(metric: str, param: str) -> str:
    """Widget key of one parameter of a metric being added to a run."""
    return f"runs.add.param.{metric}.{param}"

# compare ------------------------------------------------------------------
COMPARE_RUN = "compare.run"
COMPARE_BASELINE = "compare.baseline"
COMPARE_CANDIDATES = "compare.candidates"
COMPARE_SCORES = "compare.scores"
COMPARE_RESAMPLES = "compare.resamples"
COMPARE_SEED = "compare.seed"
COMPARE_TIES = "compare.tie_tolerance"
COMPARE_HOLM = "compare.holm"
COMPARE_REGRESSIONS = "compare.regressions_only"
COMPARE_PLAN = "compare.plan_difference"
#: The Compare button of a large comparison, and the run for which it was clicked.
COMPARE_GO = "compare.go"
COMPARE_CONFIRMED = "compare.confirmed"
#: Score and candidate of the per-datum scatter and the largest differences.
COMPARE_PAIR_SCORE = "compare.pair_score"
COMPARE_PAIR_CANDIDATE = "compare.pair_candidate"
COMPARE_TOP_N = "compare.top_n"
#: The largest-differences table (its selection opens a datum).
COMPARE_TOP = "compare.top"
#: Datum id picked in that table, opened in Explore on the next run of the page.
COMPARE_OPEN = "compare.open"
COMPARE_HUMAN_COLUMN = "compare.human_column"
COMPARE_SLICE = "compare.slice"
COMPARE_FOREST = "compare.forest"
COMPARE_SCATTER = "compare.scatter"


def compare_human(column: str, name: str) -> str:
    """Widget key of one agreement setting (kind, threshold, ...) of one human column."""
    return f"compare.human.{column}.{name}"

# -- results ---------------------------------------------------------------
RESULTS_RUN = "results.run"
RESULTS_MODELS = "results.models"
RESULTS_SCORE = "results.score"
RESULTS_CHART = "results.chart"
RESULTS_UNSCORED = "results.unscored"
RESULTS_SLICE = "results.slice"
RESULTS_ROWS = "results.rows"
#: The judge panel's table of split cells (a selected row opens in Explore).
RESULTS_PANEL_SPLIT = "results.panel.split"
#: Datum id picked in the rows table, opened in Explore on the next run of the page.
RESULTS_OPEN = "results.open"
#: Classification views of the Results page: model shown, the confusion cell picked (gold, predicted), its datums.
RESULTS_CLASS_MODEL = "results.classification.model"
RESULTS_CLASS_GOLD = "results.classification.gold"
RESULTS_CLASS_PREDICTED = "results.classification.predicted"
RESULTS_CLASS_HEATMAP = "results.classification.heatmap"
RESULTS_CLASS_ROWS = "results.classification.rows"


def results_range(score: str) -> str:
    """Slider key of the value range of one score (bounds differ per score)."""
    return f"results.range.{score}"


# -- explore ---------------------------------------------------------------
#: Page name of Explore (textgen_dashboard.page_path gives its script).
EXPLORE_PAGE = "explore"
EXPLORE_RUN = "explore.run"
EXPLORE_DATUM = "explore.datum"
EXPLORE_TEXT = "explore.text"
EXPLORE_MODELS = "explore.models"
EXPLORE_SCORE = "explore.score"
EXPLORE_UNSCORED = "explore.unscored"
#: Explore's metadata filter: the column, and the value its rows must hold.
EXPLORE_META = "explore.meta_column"
EXPLORE_META_VALUE = "explore.meta_value"
EXPLORE_DIFF_FIRST = "explore.diff_first"
EXPLORE_DIFF_SECOND = "explore.diff_second"
EXPLORE_MATCHES = "explore.matches"
ANY_SCORE = "(any score)"


def explore_range(score: str) -> str:
    """Slider key of the value range of one score."""
    return f"explore.range.{score}"

# -- label -----------------------------------------------------------------
#: The annotator's name: kept per browser tab (each tab is its own session).
LABEL_ANNOTATOR = "label.annotator"
LABEL_RUN = "label.run"
LABEL_SCORE = "label.score"
LABEL_STRATEGY = "label.strategy"
#: The tab shown first ('label' or 'agreement'), from the address.
LABEL_TAB = "label.tab"
#: The tabs widget's own state: the title of the open tab (set from LABEL_TAB before every run).
LABEL_TABS = "label.tabs"
LABEL_COUNT = "label.count"
#: Position in the labelling queue (0-based).
LABEL_POSITION = "label.position"
LABEL_NOTE = "label.note"
LABEL_VALUE = "label.value"
LABEL_SAVED = "label.saved"
LABEL_HUMAN_COLUMN = "label.human_column"
LABEL_WIDTH = "label.target_width"
LABEL_DISAGREEMENTS = "label.disagreements"
#: Datum id picked in the disagreements table, opened in Explore on the next run of the page.
LABEL_OPEN = "label.open"
#: The bias-corrected toggles of Results and Compare.
RESULTS_CALIBRATE = "results.calibrate"
COMPARE_CALIBRATE = "compare.calibrate"


def label_button(value: float) -> str:
    """Key of the button that gives one value of the scale."""
    return f"label.give.{value:g}"

# -- judge criteria ----------------------------------------------------------
CRITERIA_TEXT = "criteria.text"
CRITERIA_OPEN = "criteria.open"
CRITERIA_OPEN_GO = "criteria.open_go"
CRITERIA_DATASET = "criteria.dataset"
CRITERIA_TRY = "criteria.try"
#: (definition text, trial table) of the last trial.
CRITERIA_RESULT = "criteria.result"
CRITERIA_SAVE = "criteria.save"
CRITERIA_SAVED = "criteria.saved_message"

#: The Label page's "Improve this judge" section (textgen_dashboard/align.py).
ALIGN_HOLDOUT = "label.align.holdout"
ALIGN_SEED = "label.align.seed"
ALIGN_MINE = "label.align.mine"
ALIGN_RUN = "label.align.run"
ALIGN_RESULT = "label.align.result"
ALIGN_ACCEPT = "label.align.accept"
ALIGN_SAVED = "label.align.saved"
