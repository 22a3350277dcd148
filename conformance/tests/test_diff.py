"""conformance.diff: every differing leaf, by key and by index, with readable paths."""

from conformance.diff import MISSING, Difference, compare


def diffs(a: object, b: object) -> list[tuple[str, object, object]]:
    return [(d.path, d.go, d.ours) for d in compare(a, b, case="c", obj="o", phase="final")]


def test_equal_values_have_no_difference() -> None:
    obj = {"a": [1, {"b": "x"}], "c": None}
    assert diffs(obj, {"a": [1, {"b": "x"}], "c": None}) == []


def test_leaves_keys_and_indices() -> None:
    go = {"data": {"hostfile": "a\nb\n", "discover_hosts.sh": "x"}, "l": [1, 2, 3]}
    ours = {"data": {"hostfile": "a\n"}, "l": [1, 5], "extra": True}
    assert diffs(go, ours) == [
        ('data["discover_hosts.sh"]', "x", MISSING),
        ("data.hostfile", "a\nb\n", "a\n"),
        ("extra", MISSING, True),
        ("l[1]", 2, 5),
        ("l[2]", 3, MISSING),
    ]


def test_type_differences_count() -> None:
    assert diffs({"x": 1}, {"x": True}) == [("x", 1, True)]
    assert diffs({"x": 1}, {"x": "1"}) == [("x", 1, "1")]
    assert diffs({"x": {}}, {"x": []}) == [("x", {}, [])]


def test_describe_names_case_object_phase_and_values() -> None:
    d = Difference("pi", "ConfigMap/pi-config", "final", "data.hostfile", "a", "b")
    assert d.describe() == "pi: ConfigMap/pi-config final data.hostfile: go='a' ours='b'"
    assert d.as_dict()["object"] == "ConfigMap/pi-config"
