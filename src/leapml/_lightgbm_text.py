"""Structural checks of LightGBM model text, before LightGBM reads it.

LightGBM trusts the text it loads: a tree whose arrays disagree with its
``num_leaves`` throws inside a parallel region and aborts the process, a
child index out of range reads past an array, and a cycle among the nodes
makes prediction loop forever. A model file is input like any other, so
:func:`checked_model_text` verifies every tree before the text reaches
LightGBM and raises :class:`ValueError` naming the first problem.
"""

from __future__ import annotations

import math
import re

__all__ = ["checked_model_text"]

_INTERNAL_ARRAYS = ("split_feature", "threshold", "decision_type", "left_child", "right_child")
_OPTIONAL_INTERNAL = ("split_gain", "internal_value", "internal_weight", "internal_count")
_OPTIONAL_LEAF = ("leaf_weight", "leaf_count")
# The objectives LightGBM writes in a model's header, with their "key:value" settings
_OBJECTIVES = frozenset({
    "regression", "regression_l1", "huber", "fair", "poisson", "quantile", "mape", "gamma",
    "tweedie", "binary", "multiclass", "multiclassova", "cross_entropy", "cross_entropy_lambda",
    "lambdarank", "rank_xendcg", "custom",
})
_OBJECTIVE_SETTING = re.compile(r"\w+:[\w.+-]+")
# LightGBM cuts each line of its parameters section by position: "[key: value]"
_PARAMETER_LINE = re.compile(r"\[\w+: .*\]")


def checked_model_text(text: str) -> str:
    """Return ``text`` fit to give to LightGBM, or raise ``ValueError`` naming the problem.

    Checks the header (class and feature counts) and, for every tree, that
    each array has the length its ``num_leaves`` implies, that split features
    and categorical thresholds are in range and that the nodes form one tree
    rooted at node 0. The ``tree_sizes`` line is dropped: it only lets
    LightGBM parse trees in parallel, where an error cannot be reported.

    Examples
    --------
    >>> checked_model_text("tree\\nnum_class=1\\n")
    Traceback (most recent call last):
    ...
    ValueError: LightGBM model text lacks num_tree_per_iteration
    """
    head, sep, rest = text.partition("\nTree=")
    if not sep:
        head = text.partition("end of trees")[0]
        rest = text[len(head):]
    if head.splitlines()[:1] != ["tree"]:
        raise ValueError("LightGBM model text does not start with 'tree'")
    header = _key_values(head.splitlines()[1:])
    num_class = _integer(header, "num_class", low=1)
    per_iteration = _integer(header, "num_tree_per_iteration", low=1)
    if per_iteration != num_class:
        raise ValueError(f"num_tree_per_iteration={per_iteration} does not match num_class={num_class}")
    _check_objective(header.get("objective"))
    n_features = _integer(header, "max_feature_idx", low=0) + 1
    if not 0 <= _integer(header, "label_index", low=0) < 2**31:
        raise ValueError("label_index out of range")
    for key in ("feature_names", "feature_infos"):
        if len(header.get(key, "").split()) != n_features:
            raise ValueError(f"{key} does not list max_feature_idx + 1 entries")
    trees, end, tail = rest.partition("end of trees")
    if not end:
        raise ValueError("LightGBM model text lacks 'end of trees'")
    blocks = [b for b in ("Tree=" + trees).split("\nTree=") if b.strip()] if trees.strip() else []
    if len(blocks) % per_iteration:
        raise ValueError(f"{len(blocks)} trees is not a multiple of {per_iteration} per iteration")
    for index, block in enumerate(blocks):
        try:
            lines = block.rstrip().splitlines()[1:]
            if not all(line.strip() for line in lines):
                # LightGBM ends a tree at its first blank line
                raise ValueError("blank line inside the tree")
            _check_tree(_key_values(lines), n_features)
        except ValueError as err:
            raise ValueError(f"tree {index}: {err}") from None
    _check_parameters(tail)
    kept = [line for line in head.splitlines() if not line.startswith("tree_sizes=")]
    return "\n".join(kept) + "\n" + sep + trees + end + tail


def _check_objective(value):
    if value is None:
        return
    name, *settings = value.split(" ")
    if name not in _OBJECTIVES or not all(_OBJECTIVE_SETTING.fullmatch(t) for t in settings):
        raise ValueError(f"unknown objective {value[:40]!r}")


def _check_parameters(tail):
    start = tail.find("\nparameters:\n")
    if start < 0:
        return
    section, end, _ = tail[start + len("\nparameters:\n"):].partition("end of parameters")
    if not end:
        raise ValueError("the parameters section has no end")
    for line in section.splitlines():
        if line and not _PARAMETER_LINE.fullmatch(line):
            raise ValueError(f"malformed parameter line {line[:40]!r}")


def _key_values(lines):
    pairs = {}
    for line in lines:
        key, eq, value = line.partition("=")
        if not eq:
            if line.strip():
                raise ValueError(f"line {line[:40]!r} is not key=value")
            continue
        if key in pairs:
            raise ValueError(f"{key} appears twice")
        pairs[key] = value
    return pairs


def _integer(pairs, key, *, low):
    if key not in pairs:
        raise ValueError(f"LightGBM model text lacks {key}")
    value = _numbers(pairs, key, int)
    if len(value) != 1 or value[0] < low:
        raise ValueError(f"{key}={pairs[key]!r} is not an integer >= {low}")
    return value[0]


def _numbers(pairs, key, kind, count=None):
    if key not in pairs:
        raise ValueError(f"missing {key}")
    try:
        values = [kind(token) for token in pairs[key].split()]
    except ValueError:
        raise ValueError(f"{key} holds a value that is not a number") from None
    if count is not None and len(values) != count:
        raise ValueError(f"{key} has {len(values)} values, expected {count}")
    return values


def _optional(pairs, key, count):
    """An array LightGBM may leave empty (a tree of one leaf has no leaf weights)."""
    if key in pairs and pairs[key].split():
        _numbers(pairs, key, float, count)


def _check_tree(pairs, n_features):
    leaves = _integer(pairs, "num_leaves", low=1)
    num_cat = _integer(pairs, "num_cat", low=0)
    for value in _numbers(pairs, "leaf_value", float, leaves):
        if math.isnan(value):
            raise ValueError("leaf_value holds NaN")
    for key in _OPTIONAL_LEAF:
        _optional(pairs, key, leaves)
    if pairs.get("is_linear", "0").strip() not in ("0", "1"):
        raise ValueError("is_linear is neither 0 nor 1")
    if pairs.get("is_linear", "0").strip() == "1":
        _check_linear(pairs, leaves, n_features)
    if leaves == 1:
        return
    internal = leaves - 1
    arrays = {key: _numbers(pairs, key, float if key == "threshold" else int, internal)
              for key in _INTERNAL_ARRAYS}
    for key in _OPTIONAL_INTERNAL:
        _optional(pairs, key, internal)
    if any(not 0 <= f < n_features for f in arrays["split_feature"]):
        raise ValueError(f"split_feature outside [0, {n_features})")
    _check_categories(pairs, arrays, num_cat)
    _check_structure(arrays["left_child"], arrays["right_child"], leaves)


def _check_linear(pairs, leaves, n_features):
    _numbers(pairs, "leaf_const", float, leaves)
    counts = _numbers(pairs, "num_features", int, leaves)
    if any(c < 0 for c in counts):
        raise ValueError("num_features holds a negative count")
    features = _numbers(pairs, "leaf_features", int, sum(counts))
    _numbers(pairs, "leaf_coeff", float, sum(counts))
    if any(not 0 <= f < n_features for f in features):
        raise ValueError(f"leaf_features outside [0, {n_features})")


def _check_categories(pairs, arrays, num_cat):
    categorical = [t for d, t in zip(arrays["decision_type"], arrays["threshold"], strict=True)
                   if d & 1]
    if any(not 0 <= d < 256 for d in arrays["decision_type"]):
        raise ValueError("decision_type outside [0, 256)")
    if any(not math.isfinite(t) or t != int(t) or not 0 <= t < num_cat for t in categorical):
        raise ValueError(f"a categorical split points outside its {num_cat} category sets")
    if num_cat == 0:
        return
    bounds = _numbers(pairs, "cat_boundaries", int, num_cat + 1)
    if bounds[0] != 0 or any(b > a for a, b in zip(bounds[1:], bounds[:-1], strict=True)):
        raise ValueError("cat_boundaries does not rise from 0")
    _numbers(pairs, "cat_threshold", int, bounds[-1])


def _check_structure(left, right, leaves):
    """Every node reached once from the root: no cycle, no index out of range."""
    internal = leaves - 1
    seen_nodes, seen_leaves = [False] * internal, [False] * leaves
    seen_nodes[0], stack = True, [0]
    while stack:
        node = stack.pop()
        for child in (left[node], right[node]):
            if child >= 0:
                if child >= internal or seen_nodes[child]:
                    raise ValueError(f"node {node} has child {child}: out of range or reached twice")
                seen_nodes[child] = True
                stack.append(child)
            else:
                leaf = ~child
                if leaf >= leaves or seen_leaves[leaf]:
                    raise ValueError(f"node {node} has leaf {leaf}: out of range or reached twice")
                seen_leaves[leaf] = True
    if not all(seen_nodes) or not all(seen_leaves):
        raise ValueError("some nodes or leaves are not reached from the root")
