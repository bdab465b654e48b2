"""mkdocs hook: one page per node module of ``fgraph.nodes``, generated from the rule registry at build time.

Nothing here is written by hand, so the pages cannot drift from the code: a node module added under
``nodes/`` gets its page, a rule registered for it appears in its table. Each page holds, for every node
type the module defines,

* the factor (the module's docstring) and the constructor(s) the model DSL calls, with their docstrings;
* the interfaces with their event rank and support, the variadic group if any;
* a table of the message rules (``fgraph.registry.rules_of``): the interface the message leaves by, the
  inputs the rule reads (messages ``m_<interface>``, marginals ``q_<interface>``, joint marginals
  ``q_<a>_<b>``) with their families, the family it returns, its operator, its qualified name and the
  first line of its docstring; then the marginal rules, the plate rules and the average energies.

The pages are generated in ``on_config`` (which also puts them in the navigation under "Nodes") and
added as files in ``on_files``; nothing is written to ``docs/``. :func:`node_pages` returns them for the
tests (``tests/test_docs_site.py``).
"""
from __future__ import annotations

import importlib
import inspect
import pkgutil
import re

NAV_TITLE = "Nodes"
FOLDER = "nodes"

_PAGES: dict = {}


def _markdown(docstring: str | None) -> str:
    """The reStructuredText-ish prose of a docstring as Markdown: roles and double backquotes to code,
    ``::`` before an indented literal block to ``:`` (the indented block is a Markdown code block)."""
    text = inspect.cleandoc(docstring or "")
    text = re.sub(r":[a-z]+:`~?([^`]+)`", lambda m: f"`{m.group(1)}`", text)
    text = text.replace("``", "`")
    text = re.sub(r"::\s*$", ":", text, flags=re.MULTILINE)
    return text


def _first_line(docstring: str | None) -> str:
    text = _markdown(docstring).strip()
    return text.split("\n\n")[0].replace("\n", " ") if text else ""


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _family(family) -> str:
    return f"`{getattr(family, '__name__', family)}`" if family is not None else "follows the inputs"


def _inputs(registration, interfaces: tuple) -> str:
    parts = []
    for name, family in zip(registration.inputs, registration.families):
        what, interface = name[:1], name[2:]
        if what == "m":
            label = f"message on `{interface}`"
        elif interface in interfaces:
            label = f"marginal of `{interface}`"
        else:
            label = f"joint marginal `{interface}`"
        parts.append(f"{label}: {_family(family)}")
    return "<br>".join(parts) if parts else "(none)"


def _target(registration) -> str:
    target = registration.target
    if isinstance(target, tuple):
        return "(" + ", ".join(f"`{t}`" for t in target) + ")"
    return f"`{target}`" if target is not None else ""


def _node_section(node_type, registry) -> list:
    interfaces = tuple(node_type.interfaces)
    lines = [f"## `{node_type.__name__}`", ""]
    if node_type.__doc__ and node_type.__doc__ is not getattr(node_type.__mro__[1], "__doc__", None):
        lines += [_markdown(node_type.__doc__), ""]
    bases = [b.__name__ for b in node_type.__bases__ if b.__name__ != "FactorNode"]
    if bases:
        lines += [f"Derives from `{'`, `'.join(bases)}` and uses its rules unless it registers its own.", ""]
    event = getattr(node_type, "event_ndims", {}) or {}
    support = getattr(node_type, "support", {}) or {}
    lines += ["| interface | event rank | support |", "|---|---|---|"]
    for name in interfaces:
        rank = event.get(name, "")
        lines.append(f"| `{name}` | {rank} | {_cell(str(support[name])) if name in support else ''} |")
    variadic = getattr(node_type, "variadic", None)
    if variadic is not None:
        lines.append(f"| `{variadic[0]}1` … `{variadic[0]}K` | | variadic group |")
    lines.append("")

    registrations = registry.rules_of(node_type)
    tables = [
        (registry.MESSAGE, "Message rules", "message out of"),
        (registry.MARGINAL, "Marginal rules (structured clusters)", "joint marginal of"),
        (registry.PLATE, "Plate rules (products over an observed plate)", "message out of"),
    ]
    for kind, title, target_header in tables:
        chosen = [r for r in registrations if r.kind == kind]
        if not chosen:
            continue
        lines += [f"### {title}", "",
                  f"| {target_header} | inputs | returns | operator | rule | |", "|---|---|---|---|---|---|"]
        for r in chosen:
            lines.append(
                f"| {_target(r)} | {_inputs(r, interfaces)} | {_family(r.output)} | {r.operator or ''} "
                f"| `{r.name}` | {_cell(_first_line(r.function.__doc__))} |"
            )
        lines.append("")
    energies = [r for r in registrations if r.kind == registry.ENERGY]
    lines += ["### Average energy", ""]
    if energies:
        lines += ["| inputs | operator | function | |", "|---|---|---|---|"]
        for r in energies:
            lines.append(f"| {_inputs(r, interfaces)} | {r.operator or ''} | `{r.name}` "
                         f"| {_cell(_first_line(r.function.__doc__))} |")
    else:
        lines.append("None registered: the node adds no term of its own to the free energy "
                     "(a deterministic node, whose terms are its neighbours').")
    lines.append("")
    return lines


def node_pages() -> dict:
    """``{page path under docs/: Markdown}``: one page for every module of ``fgraph.nodes`` that defines a
    node type, and ``nodes/index.md`` listing them."""
    from fgraph import registry
    from fgraph.node import FactorNode
    import fgraph.nodes as package

    registry.load_rule_packages()
    pages, index = {}, []
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name):
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        node_types = [value for name, value in vars(module).items()
                      if isinstance(value, type) and issubclass(value, FactorNode) and value is not FactorNode
                      and value.__module__ == module.__name__ and not name.startswith("_")]
        if not node_types:
            continue
        exported = getattr(module, "__all__", [])
        constructors = [getattr(module, name) for name in exported if inspect.isfunction(getattr(module, name))]
        title = ", ".join(c.__name__ for c in constructors) or ", ".join(t.__name__ for t in node_types)
        lines = [f"# {title}", "",
                 f"Module `{module.__name__}` (`nodes/{info.name}.py`); this page is generated from the "
                 "rule registry when the site is built.", "",
                 "## The factor", "", _markdown(module.__doc__), ""]
        for constructor in constructors:
            signature = str(inspect.signature(constructor))
            lines += [f"### `{constructor.__name__}`", "", "```python", f"{constructor.__name__}{signature}", "```",
                      "", _markdown(constructor.__doc__) or "(no docstring)", ""]
        for node_type in node_types:
            lines += _node_section(node_type, registry)
        path = f"{FOLDER}/{info.name}.md"
        pages[path] = "\n".join(lines)
        summary = _first_line(module.__doc__)
        index.append((title, path, ", ".join(f"`{t.__name__}`" for t in node_types), summary))

    head = ["# Nodes", "",
            "Every factor node of `fgraph.nodes`, one page per module, generated from the rule registry "
            "(`fgraph.registry.rules_of`) each time the site is built: the factor, the constructor, the "
            "interfaces, and every registered message rule, marginal rule and average energy.", "",
            "In the rule tables, *message on `x`* is an input read as the incoming message on interface `x` "
            "(sum-product inside a cluster), *marginal of `x`* the marginal of the variable on `x` (another "
            "cluster, mean-field), *joint marginal `a_b`* the marginal of a structured cluster. "
            "[Adding a node](../adding-a-node.md) explains how these are written; "
            "[Concepts](../concepts.md) what they mean.", "",
            "| page | node types | factor |", "|---|---|---|"]
    for title, path, types, summary in index:
        head.append(f"| [{title}]({path.split('/', 1)[1]}) | {types} | {_cell(summary)} |")
    pages[f"{FOLDER}/index.md"] = "\n".join(head) + "\n"
    return pages


def on_config(config):
    _PAGES.clear()
    _PAGES.update(node_pages())
    entries = [f"{FOLDER}/index.md"] + [
        {page.split("\n", 1)[0].removeprefix("# "): path} for path, page in _PAGES.items()
        if path != f"{FOLDER}/index.md"
    ]
    nav = config["nav"] or []
    for i, item in enumerate(nav):
        if isinstance(item, dict) and NAV_TITLE in item:
            nav[i] = {NAV_TITLE: entries}
            break
    return config


def on_files(files, config):
    from mkdocs.structure.files import File

    for path, content in _PAGES.items():
        files.append(File.generated(config, path, content=content))
    return files
