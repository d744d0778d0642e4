"""Every change of a market's state goes through the lifecycle table: no module of the
store or the daemon writes `market.state` other than `Transactions._transition`."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import oracle

ROOT = Path(oracle.__file__).parent
SCANNED = [ROOT / "store", ROOT / "daemon"]
# Migrations rewrite stored data along with the schema; they are not a market's move.
NOT_SCANNED = ROOT / "store" / "migrations"
# (module, function): the one writer of a state change, and the insert of a new market
# in the lifecycle's first state (a creation, not a move).
ALLOWED = {
    ("store/_transaction.py", "_transition"),
    ("store/markets.py", "_add_markets"),
}
STATE_COLUMNS = {"state", "state_changed_at"}
# Calls whose `state=` keyword would set a market's column.
WRITING_CALLS = {"values", "MarketRow", "model_construct", "model_copy", "market_row", "dict"}
RAW_UPDATE = re.compile(r"\bUPDATE\s+market\b.*\bSET\b.*\bstate\b", re.IGNORECASE | re.DOTALL)


def _call_name(node: ast.Call) -> str:
    func = node.func
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def state_writes(source: str, module: str) -> list[str]:
    """Where `source` writes a market's state other than in an allowed function."""
    # An assigned `.state` is a market's only where markets are at hand (the intents
    # have a `state` of their own).
    markets_at_hand = "MarketRow" in source or "MARKET" in source
    found: list[str] = []

    def visit(node: ast.AST, function: str) -> None:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            function = node.name
        if (module, function) not in ALLOWED:
            problem = _problem(node, markets_at_hand)
            if problem:
                found.append(f"{module}:{getattr(node, 'lineno', '?')} in {function}: {problem}")
        for child in ast.iter_child_nodes(node):
            visit(child, function)

    visit(ast.parse(source), "<module>")
    return found


def _problem(node: ast.AST, markets_at_hand: bool) -> str | None:
    targets: list[ast.expr] = []
    if isinstance(node, ast.Assign):
        targets = node.targets
    elif isinstance(node, ast.AugAssign | ast.AnnAssign):
        targets = [node.target]
    for target in targets:
        if markets_at_hand and isinstance(target, ast.Attribute) and target.attr in STATE_COLUMNS:
            return f"assigns .{target.attr}"
    if isinstance(node, ast.Call):
        name = _call_name(node)
        if (
            markets_at_hand
            and name == "setattr"
            and any(isinstance(a, ast.Constant) and a.value in STATE_COLUMNS for a in node.args)
        ):
            return "setattr of a state column"
        if name in WRITING_CALLS and any(k.arg in STATE_COLUMNS for k in node.keywords):
            return f"{name}(state=...)"
    if isinstance(node, ast.Dict) and any(
        isinstance(k, ast.Constant) and k.value in STATE_COLUMNS for k in node.keys
    ):
        return "a dict of column values with the state"
    if (
        isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and RAW_UPDATE.search(node.value)
    ):
        return "SQL that updates the state"
    return None


def test_only_the_transition_helper_writes_a_markets_state() -> None:
    found = []
    for directory in SCANNED:
        for path in sorted(directory.rglob("*.py")):
            if NOT_SCANNED in path.parents:
                continue
            module = path.relative_to(ROOT).as_posix()
            found += state_writes(path.read_text(encoding="utf-8"), module)
    assert found == [], "market states written outside the lifecycle table:\n" + "\n".join(found)


def test_the_scan_finds_each_way_round_the_table() -> None:
    bypasses = {
        "orm": "def f(market: MarketRow):\n    market.state = 'reviewed'\n",
        "core": "def f():\n    update(MARKET).values(state='final')\n",
        "updates": "def f(store):\n    store.apply_event(m, e, updates={'state': 'final'})\n",
        "setattr": "def f(row: MarketRow):\n    setattr(row, 'state', 'final')\n",
        "sql": "def f():\n    text(\"UPDATE market SET state = 'final'\")\n",
    }
    for name, source in bypasses.items():
        assert state_writes(source, "store/x.py"), name
    # The same code in the helper is the table's own write.
    assert not state_writes(
        bypasses["core"].replace("def f", "def _transition"), "store/_transaction.py"
    )
    # Another record's `state` (an intent's) is not a market's.
    assert not state_writes("def f(row):\n    row.state = intent.state\n", "store/intents.py")
