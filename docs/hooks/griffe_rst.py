"""griffe extension for the API reference: the docstrings' reStructuredText inline markup as Markdown.

The docstrings are written for reading in the source and with ``help()``: prose with reStructuredText
roles (``:class:`~fgraph.model.Model```, ``:func:`infer```), double backquotes for code and ``::``
before an indented literal block, plus NumPy-style ``Parameters`` sections in some functions.
mkdocstrings reads them as Markdown with the NumPy parser (``docstring_style: numpy`` in ``mkdocs.yml``);
before it does, this extension rewrites, in the docstring of every object loaded:

* a role to the code it names, as the role's reader would show it: ``:class:`~a.b.C``` -> `` `C` ``,
  ``:mod:`a.b``` -> `` `a.b` ``;
* ``::`` ending a paragraph before a literal block to ``:`` (the indented block stays a Markdown code
  block).

Double backquotes are left alone: ````x```` is a code span in Markdown too.
"""
from __future__ import annotations

import re

from griffe import Extension

ROLE = re.compile(r":(?:py:)?(?:class|func|meth|mod|attr|data|obj|exc|const|term|ref|doc):`(~?)([^`<]+?)(?:\s*<([^>`]+)>)?`")
LITERAL_MARKER = re.compile(r"(\S)::[ \t]*$|^([ \t]*)::[ \t]*$", re.MULTILINE)


def _role(match: re.Match) -> str:
    short, text, target = match.group(1), match.group(2).strip(), match.group(3)
    if target is not None:  # :ref:`title <target>`
        return text
    return f"`{text.rsplit('.', 1)[-1] if short else text}`"


def _literal_marker(match: re.Match) -> str:
    return f"{match.group(1)}:" if match.group(1) is not None else match.group(2)


def markdown(text: str) -> str:
    """``text`` with its roles and literal-block markers rewritten (see the module docstring)."""
    return LITERAL_MARKER.sub(_literal_marker, ROLE.sub(_role, text))


class RestructuredTextRoles(Extension):
    """Rewrites the docstring of every object of a loaded package with :func:`markdown`."""

    def on_package(self, *, pkg, **kwargs) -> None:
        stack = [pkg]
        while stack:
            obj = stack.pop()
            if obj.docstring is not None:
                obj.docstring.value = markdown(obj.docstring.value)
            stack.extend(member for member in obj.members.values() if not member.is_alias)
