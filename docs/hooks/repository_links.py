"""mkdocs hook: links from the pages to files of the repository outside ``docs/``.

The pages are read in two places: on the repository's web view, where a relative link such as
``../benchmarks/gmm.py`` or ``../results/cmn/summary.json`` opens the file, and on the site, which holds
only ``docs/``. Before a page is rendered, every relative link whose target lies outside ``docs/`` is
checked and rewritten:

* the target must exist in the repository; a link to a missing file is logged as a warning, so that
  ``mkdocs build --strict`` fails on it as it fails on a broken link inside the site;
* with ``repo_url`` set in ``mkdocs.yml`` the link points to the file in the repository
  (``<repo_url>/blob/<branch>/<path>``, ``<repo_url>/tree/<branch>/<path>`` for a folder; the branch is
  the ``extra.repository_branch`` setting, ``main`` by default);
* without ``repo_url`` it becomes the file's repository path as inline code (``benchmarks/gmm.py``),
  readable but not a link, since the site has no copy of it.

Links inside the site (pages, figures under ``docs/``) are left to mkdocs' own validation; fenced code
blocks are not touched.
"""
from __future__ import annotations

import logging
import posixpath
import re
from pathlib import Path

log = logging.getLogger("mkdocs.hooks.repository_links")

# [text](target) or [text](target "title"); images (![alt](...)) have the same shape
LINK = re.compile(r"(?P<bang>!?)\[(?P<text>[^\]\n]*)\]\((?P<target>[^)\s]+)(?P<title>\s+\"[^\"]*\")?\)")
FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})")


def _outside_target(page_src: str, target: str, docs_dir: Path, root: Path) -> tuple[str, str] | None:
    """``(repository path, anchor)`` when ``target`` is a relative link leaving ``docs/``; else ``None``."""
    if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target) or target.startswith(("#", "/")):
        return None  # a URL, an anchor in the page, or an absolute site path
    path, _, anchor = target.partition("#")
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(page_src), path))
    if not joined.startswith("../"):
        return None  # inside docs/: mkdocs validates it
    resolved = (docs_dir / joined).resolve()
    try:
        relative = resolved.relative_to(root)
    except ValueError:
        return None
    return relative.as_posix(), anchor


def on_page_markdown(markdown, page, config, files):
    docs_dir = Path(config["docs_dir"]).resolve()
    root = Path(config["config_file_path"]).resolve().parent
    repo_url = (config.get("repo_url") or "").rstrip("/")
    branch = (config.get("extra") or {}).get("repository_branch", "main")
    page_src = page.file.src_uri

    def replace(match):
        found = _outside_target(page_src, match.group("target"), docs_dir, root)
        if found is None:
            return match.group(0)
        path, anchor = found
        target = root / path
        if not target.exists():
            log.warning("Doc file '%s' contains a link to '%s', which does not exist in the repository (%s)",
                        page_src, match.group("target"), path)
            return match.group(0)
        if repo_url:
            kind = "tree" if target.is_dir() else "blob"
            url = f"{repo_url}/{kind}/{branch}/{path}" + (f"#{anchor}" if anchor else "")
            return f"{match.group('bang')}[{match.group('text')}]({url}{match.group('title') or ''})"
        text = match.group("text")
        shown = path + ("/" if target.is_dir() else "")
        # the text already names the file (often as code): keep it and add the path only when it differs
        plain = text.strip("`")
        return text if plain.rstrip("/") == path or plain.endswith(shown.rstrip("/")) else f"{text} (`{shown}`)"

    lines, inside, fence = [], False, ""
    for line in markdown.split("\n"):
        opened = FENCE.match(line)
        if opened and (not inside or opened.group(2).startswith(fence)):
            inside, fence = (not inside), opened.group(2)
            lines.append(line)
            continue
        lines.append(line if inside else LINK.sub(replace, line))
    return "\n".join(lines)
