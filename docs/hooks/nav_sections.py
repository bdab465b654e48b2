"""mkdocs hook: a navigation entry may point to a section of a page, ``Title: page.md#anchor``.

mkdocs' navigation takes whole pages only (an entry with an anchor is reported as not found). This hook
takes such entries out of the configured navigation before mkdocs reads it, puts them back as links to
the page's address plus the anchor once the navigation is built, and checks after the build that the
anchor is a heading of that page: a missing page or anchor is a warning, which fails
``mkdocs build --strict``.
"""
from __future__ import annotations

import logging

log = logging.getLogger("mkdocs.hooks.nav_sections")

_ENTRIES: list = []  # (path of section titles, position in it, title, page, anchor)


def _take_out(items: list, trail: tuple) -> list:
    kept = []
    for item in items:
        if isinstance(item, dict) and len(item) == 1:
            (title, value), = item.items()
            if isinstance(value, list):
                kept.append({title: _take_out(value, trail + (title,))})
                continue
            if isinstance(value, str) and "#" in value and "://" not in value:
                page, anchor = value.split("#", 1)
                _ENTRIES.append((trail, len(kept), title, page, anchor))
                continue
        kept.append(item)
    return kept


def on_config(config):
    _ENTRIES.clear()
    if config["nav"]:
        config["nav"] = _take_out(config["nav"], ())
    return config


def on_nav(nav, config, files):
    from mkdocs.structure.nav import Link, Section

    for trail, position, title, page, anchor in _ENTRIES:
        file = files.get_file_from_path(page)
        if file is None:
            log.warning("The 'nav' entry '%s: %s#%s' names a page that is not among the documentation files",
                        title, page, anchor)
            continue
        children = nav.items
        parent = None
        for name in trail:
            parent = next(i for i in children if isinstance(i, Section) and i.title == name)
            children = parent.children
        link = Link(title, f"{file.url}#{anchor}")
        link.parent = parent
        children.insert(position, link)
    return nav


def on_page_context(context, page, config, nav):
    for trail, position, title, path, anchor in _ENTRIES:
        if page.file.src_uri != path:
            continue
        anchors = set()
        stack = list(page.toc)
        while stack:
            item = stack.pop()
            anchors.add(item.id)
            stack.extend(item.children)
        if anchor not in anchors:
            log.warning("The 'nav' entry '%s: %s#%s' names an anchor that is not a heading of that page",
                        title, path, anchor)
    return context
