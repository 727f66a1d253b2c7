"""ClusterSpec: construction, accessors, errors, and agreement with real TensorFlow."""

from __future__ import annotations

import json
from typing import Any

import pytest

from dtf_notebook.distributed.cluster_spec import ClusterSpec

DENSE = {"worker": ["w0:2222", "w1:2222", "w2:2222"], "ps": ["p0:2222", "p1:2222"]}
SPARSE = {"worker": {1: "w1:2222", 3: "w3:2222"}, "ps": ["p0:2222"]}


def test_dense_accessors():
    cluster = ClusterSpec(DENSE)
    assert cluster.jobs == ["worker", "ps"]
    assert cluster.num_tasks("worker") == 3
    assert cluster.task_indices("ps") == [0, 1]
    assert cluster.task_address("worker", 2) == "w2:2222"
    assert cluster.job_tasks("ps") == ["p0:2222", "p1:2222"]
    assert cluster.as_dict() == DENSE


def test_sparse_accessors():
    cluster = ClusterSpec(SPARSE)
    assert cluster.num_tasks("worker") == 2
    assert cluster.task_indices("worker") == [1, 3]
    assert cluster.job_tasks("worker") == [None, "w1:2222", None, "w3:2222"]
    assert cluster.as_dict() == {"worker": {1: "w1:2222", 3: "w3:2222"}, "ps": ["p0:2222"]}


def test_sparse_job_given_from_zero_is_dense():
    assert ClusterSpec({"w": {1: "b:1", 0: "a:1"}}).as_dict() == {"w": ["a:1", "b:1"]}


def test_tuples_and_string_indices_are_accepted():
    cluster = ClusterSpec({"ps": ("p0:1", "p1:1"), "worker": {"2": "w2:1"}})
    assert cluster.as_dict() == {"ps": ["p0:1", "p1:1"], "worker": {2: "w2:1"}}


def test_bytes_are_decoded():
    cluster = ClusterSpec({b"ps": [b"p0:1"]})
    assert cluster.jobs == ["ps"]
    assert cluster.task_address("ps", 0) == "p0:1"


def test_empty_cluster_and_empty_job():
    empty = ClusterSpec({})
    assert not empty
    assert empty.jobs == []
    assert empty.as_dict() == {}
    assert repr(empty) == "ClusterSpec({})"
    cluster = ClusterSpec({"chief": []})
    assert cluster
    assert cluster.num_tasks("chief") == 0
    assert cluster.task_indices("chief") == []
    with pytest.raises(ValueError, match="Job 'chief' has no tasks"):
        cluster.job_tasks("chief")
    assert cluster.as_dict() == {"chief": {}}


def test_repr_and_str():
    expected = "ClusterSpec({'ps': ['p0:2222'], 'worker': {1: 'w1:2222', 3: 'w3:2222'}})"
    assert repr(ClusterSpec(SPARSE)) == expected
    assert str(ClusterSpec(SPARSE)) == expected


def test_copy_constructor_is_equal_and_independent():
    original = ClusterSpec(DENSE)
    copy = ClusterSpec(original)
    assert copy == original
    assert copy is not original
    copy.as_dict()["ps"].append("x:1")
    assert original.num_tasks("ps") == 2


def test_equality_and_hash():
    assert ClusterSpec(DENSE) == ClusterSpec(dict(reversed(list(DENSE.items()))))
    assert ClusterSpec({"ps": ["a:1"]}) != ClusterSpec({"ps": ["b:1"]})
    assert ClusterSpec({"ps": ["a:1"]}) != ClusterSpec({"ps": {1: "a:1"}})
    assert not ClusterSpec({"ps": ["a:1"]}) != ClusterSpec({"ps": {0: "a:1"}})
    assert ClusterSpec({"ps": ["a:1"]}) != {"ps": ["a:1"]}
    assert len({ClusterSpec(DENSE), ClusterSpec(DENSE), ClusterSpec(SPARSE)}) == 2


def test_is_immutable():
    cluster = ClusterSpec(DENSE)
    with pytest.raises(AttributeError, match="immutable"):
        cluster._spec = {}  # type: ignore[misc]
    cluster.as_cluster_def_dict()["job"].clear()
    del cluster.as_cluster_def().job[:]
    cluster.task_indices("ps").clear()
    assert cluster == ClusterSpec(DENSE)


def test_cluster_def_round_trip():
    cluster = ClusterSpec(SPARSE)
    assert ClusterSpec(cluster.as_cluster_def()) == ClusterSpec.from_cluster_def(cluster.as_cluster_def()) == cluster
    cluster_def = cluster.as_cluster_def_dict()
    assert cluster_def == {
        "job": [
            {"name": "ps", "tasks": {0: "p0:2222"}},
            {"name": "worker", "tasks": {1: "w1:2222", 3: "w3:2222"}},
        ]
    }
    assert ClusterSpec(cluster_def) == cluster
    assert ClusterSpec.from_cluster_def(cluster_def) == cluster


def test_cluster_def_survives_json():
    cluster = ClusterSpec(SPARSE)
    assert ClusterSpec(json.loads(json.dumps(cluster.as_cluster_def_dict()))) == cluster


def test_empty_cluster_def():
    assert ClusterSpec({}).as_cluster_def_dict() == {"job": []}
    assert ClusterSpec({}).as_cluster_def().ByteSize() == 0 and not ClusterSpec(ClusterSpec({}).as_cluster_def())
    assert ClusterSpec.from_cluster_def({"job": []}) == ClusterSpec({})
    # Deviation from TF (which sees a job named "job" without tasks), so that it round-trips.
    assert ClusterSpec({"job": []}) == ClusterSpec({})


def test_job_named_job_is_still_a_job():
    assert ClusterSpec({"job": ["j0:1"]}).as_dict() == {"job": ["j0:1"]}


@pytest.mark.parametrize(
    "cluster_def, error, match",
    [
        ("nope", TypeError, "cluster def must be a dict"),
        ({"job": [{"tasks": {}}]}, TypeError, "'name' and 'tasks'"),
        ({"job": [{"name": "ps", "tasks": ["a:1"]}]}, TypeError, "tasks of job 'ps'"),
        ({"job": [{"name": "ps"}, {"name": "ps"}]}, ValueError, "Job 'ps' appears twice"),
        ({"job": [{"name": "p-s", "tasks": {}}]}, ValueError, "'p-s' is not valid"),
    ],
)
def test_bad_cluster_defs(cluster_def: Any, error: type[Exception], match: str):
    with pytest.raises(error, match=match):
        ClusterSpec.from_cluster_def(cluster_def)


def test_unknown_job_names_the_job():
    cluster = ClusterSpec(DENSE)
    for method in (cluster.num_tasks, cluster.task_indices, cluster.job_tasks):
        with pytest.raises(ValueError, match=r"^No such job in cluster: 'pss'$"):
            method("pss")
    with pytest.raises(ValueError, match=r"^No such job in cluster: 'pss'$"):
        cluster.task_address("pss", 0)
    with pytest.raises(ValueError, match=r"^No such job in cluster: \['ps'\]$"):
        cluster.num_tasks(["ps"])  # type: ignore[arg-type]


def test_unknown_task_names_the_index_and_job():
    cluster = ClusterSpec(SPARSE)
    with pytest.raises(ValueError, match=r"^No task with index 3 in job 'ps'$"):
        cluster.task_address("ps", 3)
    with pytest.raises(ValueError, match=r"^No task with index 2 in job 'worker'$"):
        cluster.task_address("worker", 2)
    with pytest.raises(ValueError, match=r"^No task with index '1' in job 'worker'$"):
        cluster.task_address("worker", "1")  # type: ignore[arg-type]


@pytest.mark.parametrize("cluster", [None, "ps:1", [("ps", ["a:1"])], 3])
def test_cluster_of_the_wrong_type(cluster: Any):
    with pytest.raises(TypeError, match="cluster must be a dictionary mapping one or more job names"):
        ClusterSpec(cluster)


@pytest.mark.parametrize(
    "cluster, error, match",
    [
        ({"ps": "a:1"}, TypeError, r"tasks for job 'ps' must be a list or a dictionary.* Got 'a:1'\.$"),
        ({"ps": None}, TypeError, r"tasks for job 'ps'.* Got None\.$"),
        (
            {"ps": 5},
            TypeError,
            r"^The tasks for job 'ps' must be a list or a dictionary from integers to strings\. Got 5\.$",
        ),
        ({"ps": [1]}, TypeError, r"Task address 1 must be bytes or unicode"),
        ({"ps": [None]}, TypeError, r"Task address None must be bytes or unicode"),
        ({1: ["a:1"]}, TypeError, r"Job name 1 must be bytes or unicode"),
        ({"p-s": ["a:1"]}, ValueError, r"Job name 'p-s' is not valid"),
        ({"_ps": ["a:1"]}, ValueError, r"Job name '_ps' is not valid"),
        ({"1ps": ["a:1"]}, ValueError, r"Job name '1ps' is not valid"),
        ({"": ["a:1"]}, ValueError, r"Job name '' is not valid"),
        ({"ps": {-1: "a:1"}}, ValueError, r"Task index -1 of job 'ps' must not be negative"),
        ({"ps": {"x": "a:1"}}, ValueError, r"Task index 'x' of job 'ps' is not an integer"),
        ({"ps": {1.5: "a:1"}}, TypeError, r"Task index 1.5 of job 'ps' must be an integer"),
        ({"ps": {1: "a:1", "1": "b:1"}}, ValueError, r"Task index '1' of job 'ps' is given twice"),
        ({"ps": ["a:1"], b"ps": ["b:1"]}, ValueError, r"Job 'ps' appears twice"),
    ],
)
def test_bad_inputs_name_the_bad_value(cluster: Any, error: type[Exception], match: str):
    with pytest.raises(error, match=match):
        ClusterSpec(cluster)


def test_valid_job_names():
    assert ClusterSpec({"Worker": [], "w_1": [], "localhost": []}).jobs == ["Worker", "w_1", "localhost"]


def test_task_names_and_task_of():
    cluster = ClusterSpec(SPARSE)
    assert cluster.task_names() == [
        "/job:ps/replica:0/task:0",
        "/job:worker/replica:0/task:1",
        "/job:worker/replica:0/task:3",
    ]
    assert cluster.task_of("w3:2222") == ("worker", 3)
    assert cluster.task_of("nowhere:1") is None


# --- oracle: the same inputs through real TensorFlow ------------------------------------------

ORACLE_CASES = [
    {},
    DENSE,
    SPARSE,
    {"chief": ["c0:1"], "worker": ["w0:1", "w1:1"], "evaluator": ["e0:1"]},
    {"worker": {0: "w0:1", 1: "w1:1"}},
    {"worker": {"5": "w5:1", "2": "w2:1"}},
    {"ps": ("p0:1",), "worker": {7: "w7:1"}},
    {"localhost": ["localhost:2222"]},
    {"worker": ["w0:1"], "ps": ["p0:1"], "chief": []},
]


@pytest.fixture(scope="module")
def tf():
    return pytest.importorskip("tensorflow")


def _tf_cluster_def(tf_cluster: Any) -> dict[str, Any]:
    return {"job": [{"name": job.name, "tasks": dict(job.tasks)} for job in tf_cluster.as_cluster_def().job]}


@pytest.mark.tf_oracle
@pytest.mark.parametrize("cluster", ORACLE_CASES)
def test_matches_tensorflow(tf: Any, cluster: dict[str, Any]):
    ours, theirs = ClusterSpec(cluster), tf.train.ClusterSpec(cluster)
    assert list(ours.as_dict().items()) == list(theirs.as_dict().items())
    assert ours.jobs == theirs.jobs
    assert ClusterSpec(ours).jobs == tf.train.ClusterSpec(theirs).jobs
    assert ClusterSpec(ours.as_cluster_def()).jobs == tf.train.ClusterSpec(theirs.as_cluster_def()).jobs
    assert repr(ours) == repr(theirs)
    assert str(ours) == str(theirs)
    assert bool(ours) == bool(theirs)
    assert ours.as_cluster_def_dict() == _tf_cluster_def(theirs)
    # The protobufs are the same bytes both ways.
    assert ours.as_cluster_def().SerializeToString() == theirs.as_cluster_def().SerializeToString()
    assert ClusterSpec(type(ours.as_cluster_def()).FromString(theirs.as_cluster_def().SerializeToString())) == ours
    for job in ours.jobs:
        assert ours.num_tasks(job) == theirs.num_tasks(job)
        assert ours.task_indices(job) == theirs.task_indices(job)
        assert _outcome(ours.job_tasks, job) == _outcome(theirs.job_tasks, job)
        for index in ours.task_indices(job):
            assert ours.task_address(job, index) == theirs.task_address(job, index)
    # Both survive a trip through their cluster-def form and a copy.
    assert ClusterSpec(ours.as_cluster_def()).as_dict() == tf.train.ClusterSpec(theirs.as_cluster_def()).as_dict()
    assert ClusterSpec(ours).as_dict() == tf.train.ClusterSpec(theirs).as_dict()


def _outcome(call: Any, *args: Any) -> Any:
    try:
        return call(*args)
    except ValueError:
        return ValueError


def _error(build: Any) -> tuple[type[Exception], str] | None:
    try:
        build()
    except (TypeError, ValueError) as error:
        return type(error), str(error)
    return None


@pytest.mark.tf_oracle
@pytest.mark.parametrize(
    "cluster, same_message",
    [
        ({"ps": "a:1"}, True),
        ({"ps": 5}, True),
        ({"ps": [1]}, True),
        ({"ps": [None]}, True),
        ({1: ["a:1"]}, True),
        (None, False),
        ("ps", False),
        ([("ps", ["a:1"])], False),
    ],
)
def test_construction_errors_match_tensorflow(tf: Any, cluster: Any, same_message: bool):
    ours, theirs = _error(lambda: ClusterSpec(cluster)), _error(lambda: tf.train.ClusterSpec(cluster))
    assert ours is not None and theirs is not None
    assert ours[0] is theirs[0]
    if same_message:
        # TF's wording; where TF does not name the bad value, ours appends it.
        assert ours[1] == theirs[1] or ours[1].startswith(theirs[1] + " Got ")


@pytest.mark.tf_oracle
@pytest.mark.parametrize(
    "method, args",
    [
        ("num_tasks", ("pss",)),
        ("task_indices", ("pss",)),
        ("job_tasks", ("pss",)),
        ("task_address", ("pss", 0)),
        ("task_address", ("worker", 2)),
        ("task_address", ("worker", 9)),
        ("task_address", ("worker", "1")),
        ("task_address", ("ps", 1)),
    ],
)
def test_lookup_errors_match_tensorflow(tf: Any, method: str, args: tuple[Any, ...]):
    ours = _error(lambda: getattr(ClusterSpec(SPARSE), method)(*args))
    theirs = _error(lambda: getattr(tf.train.ClusterSpec(SPARSE), method)(*args))
    assert ours is not None
    assert ours == theirs
