"""Placer: pure functions over node data, no processes and no torch."""

from __future__ import annotations

from dtf_notebook.placement.placer import PlacementNode, place

CLUSTER = [
    "/job:ps/replica:0/task:0/device:CPU:0",
    "/job:ps/replica:0/task:1/device:CPU:0",
    "/job:worker/replica:0/task:0/device:CPU:0",
    "/job:worker/replica:0/task:0/device:GPU:0",
    "/job:worker/replica:0/task:0/device:GPU:1",
    "/job:worker/replica:0/task:1/device:CPU:0",
]


def placed(nodes, devices=CLUSTER, **kw):
    result, errors = place(nodes, devices, **kw)
    assert not errors, errors
    return result


def test_seed_example_partial_specs_resolve_like_tf():
    # Master is worker task 1 (machine B); "/job:ps" means ps task 0; empty means the master's default device.
    nodes = [
        PlacementNode("a", "Const", "/job:ps/task:0/device:CPU:0"),
        PlacementNode("b", "Add", "/job:worker/task:0/device:GPU:1"),
        PlacementNode("c", "Add", ""),
        PlacementNode("d", "Const", "/job:ps"),
        PlacementNode("e", "Const", "/job:worker/task:0"),
    ]
    result = placed(nodes, default_job="worker", default_task=1)
    assert result["a"] == "/job:ps/replica:0/task:0/device:CPU:0"
    assert result["b"] == "/job:worker/replica:0/task:0/device:GPU:1"
    assert result["c"] == "/job:worker/replica:0/task:1/device:CPU:0"  # task 1 has no GPU
    assert result["d"] == "/job:ps/replica:0/task:0/device:CPU:0"
    assert result["e"] == "/job:worker/replica:0/task:0/device:GPU:0"  # default device of task 0 is its GPU


def test_cpu_only_nodes_avoid_gpus():
    nodes = [PlacementNode("s", "Const", "/job:worker/task:0", cpu_only=True)]
    assert placed(nodes, default_job="worker")["s"].endswith("task:0/device:CPU:0")


def test_colocation_and_ref_edges_share_a_device():
    nodes = [
        PlacementNode("v", "VariableV2", "/job:ps/task:1"),
        PlacementNode("v/Assign", "Assign", "", ref_sources=("v",)),
        PlacementNode("v/read", "Identity", "/job:ps", colocation=("v",)),
    ]
    result = placed(nodes, default_job="worker")
    assert set(result.values()) == {"/job:ps/replica:0/task:1/device:CPU:0"}


def test_conflicting_colocation_is_an_error_naming_both():
    nodes = [
        PlacementNode("v", "VariableV2", "/job:ps/task:1"),
        PlacementNode("w", "Identity", "/job:ps/task:0", colocation=("v",)),
    ]
    _, errors = place(nodes, CLUSTER, default_job="worker")
    assert "Cannot colocate nodes" in errors["w"] and "v" in errors["w"]


def test_an_op_reading_a_variable_follows_it_and_an_explicit_conflict_is_refused_alone():
    # TF 2's replica_device_setter sends a resource variable's VarIsInitializedOp to the worker while the handle it
    # reads is on the ps task: TF moves it to the variable, as it does any op that reads or updates one. A conflict
    # of an explicit colocate_with is refused for that node only (TF places each step's nodes only).
    nodes = [
        PlacementNode("check", "VarIsInitializedOp", "/job:worker", ref_sources=("w",)),
        PlacementNode("read", "ReadVariableOp", "", ref_sources=("w",)),
        PlacementNode("pinned", "Identity", "/job:worker", colocation=("w",)),
        PlacementNode("w", "VarHandleOp", "/job:ps/task:1", holds_state=True),
    ]
    placement, errors = place(nodes, CLUSTER, default_job="worker")
    ps1 = "/job:ps/replica:0/task:1/device:CPU:0"
    assert placement == {"w": ps1, "read": ps1, "check": ps1}
    assert set(errors) == {"pinned"} and "Cannot colocate nodes w and pinned" in errors["pinned"]


def test_missing_device_error_and_soft_placement():
    nodes = [PlacementNode("g", "MatMul", "/job:worker/task:1/device:GPU:0")]
    _, errors = place(nodes, CLUSTER, default_job="worker")
    assert "Cannot assign a device for operation g" in errors["g"]
    assert "/job:worker/replica:0/task:1/device:CPU:0" in errors["g"]
    result = placed(nodes, default_job="worker", allow_soft_placement=True)
    assert result["g"] == "/job:worker/replica:0/task:1/device:CPU:0"
    unknown_job = [PlacementNode("m", "Const", "/job:moon")]
    assert placed(unknown_job, default_job="worker", default_task=1, allow_soft_placement=True)["m"] == (
        "/job:worker/replica:0/task:1/device:CPU:0"
    )


def test_errors_are_per_node_not_global():
    nodes = [PlacementNode("ok", "Const", ""), PlacementNode("bad", "Const", "/job:nope")]
    result, errors = place(nodes, CLUSTER, default_job="worker")
    assert "ok" in result and "bad" in errors and "ok" not in errors


def test_large_graph_places_quickly_enough_to_be_usable():
    nodes = [
        PlacementNode(
            f"n{i}", "Add", "/job:worker/task:0" if i % 2 else "", colocation=(f"n{i - 1}",) if i % 7 == 0 and i else ()
        )
        for i in range(5000)
    ]
    result = placed(nodes, default_job="worker")
    assert len(result) == 5000


def test_a_generator_goes_with_its_consumers_when_they_share_a_device_its_request_allows():
    def generator(name, requested="", cpu_only=False, consumers=()):
        return PlacementNode(name, "Const", requested, cpu_only=cpu_only, generator=True, consumers=consumers)

    nodes = [
        PlacementNode("on_ps1", "AssignAdd", "/job:ps/task:1"),
        PlacementNode("on_gpu1", "MatMul", "/job:worker/task:0/device:GPU:1"),
        PlacementNode("on_w1", "Add", "/job:worker/task:1"),
        generator("one", consumers=("on_ps1",)),
        generator("two_devices", consumers=("on_ps1", "on_w1")),
        generator("asks_worker", "/job:worker", consumers=("on_ps1",)),
        generator("asks_gpu", "/device:GPU:1", consumers=("on_gpu1",)),
        generator("strings", cpu_only=True, consumers=("on_gpu1",)),
        generator("unused"),
        PlacementNode("v", "VariableV2", generator=False),
        PlacementNode("grouped", "Const", colocation=("v",), generator=True, consumers=("on_ps1",)),
    ]
    out = placed(nodes, default_job="worker", default_task=1, state_task=("ps", 0))
    assert out["one"] == "/job:ps/replica:0/task:1/device:CPU:0"
    assert out["two_devices"] == out["unused"] == "/job:worker/replica:0/task:1/device:CPU:0"  # the master's
    assert out["asks_worker"] == "/job:worker/replica:0/task:1/device:CPU:0"
    assert out["asks_gpu"] == "/job:worker/replica:0/task:0/device:GPU:1"
    assert out["strings"] == "/job:worker/replica:0/task:1/device:CPU:0"
    assert out["grouped"] == out["v"]  # a colocation group decides as a whole
