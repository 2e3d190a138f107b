#!/usr/bin/env python3
"""Writes src/crd/<tag>.schema: the structural shape of the LeaderWorkerSet CRD schema at an lws
tag (config/crd/bases/leaderworkerset.x-k8s.io_leaderworkersets.yaml), which `src/crd.rs` prunes
by, as the API server does (apiextensions-apiserver pkg/apiserver/schema/pruning/algorithm.go).

Usage: scripts/crd-schema.py LWS_GIT_DIR TAG > src/crd/TAG.schema

One line per distinct subschema, children before parents, the root last. A line is a flag
(`P`: x-kubernetes-preserve-unknown-fields, `-` otherwise) and entries `name:id` (properties),
`[]:id` (items), `{}:id` (additionalProperties schema) or `{}:*` (additionalProperties: true);
`id` is a line number counted from 0 over the non-comment lines.
"""
import subprocess
import sys

import yaml

git_dir, tag = sys.argv[1], sys.argv[2]
path = "config/crd/bases/leaderworkerset.x-k8s.io_leaderworkersets.yaml"
text = subprocess.run(["git", "-C", git_dir, "show", f"{tag}:{path}"], check=True,
                      capture_output=True, text=True).stdout
crd = yaml.safe_load(text)
versions = crd["spec"]["versions"]
assert len(versions) == 1, "one served version expected"
root = versions[0]["schema"]["openAPIV3Schema"]

lines, ids = [], {}


def encode(node):
    entries = []
    for name in sorted(node.get("properties", {})):
        entries.append(f"{name}:{encode(node['properties'][name])}")
    if "items" in node:
        entries.append(f"[]:{encode(node['items'])}")
    extra = node.get("additionalProperties")
    if extra is True:
        entries.append("{}:*")
    elif isinstance(extra, dict):
        entries.append(f"{{}}:{encode(extra)}")
    flag = "P" if node.get("x-kubernetes-preserve-unknown-fields") else "-"
    line = " ".join([flag] + entries)
    if line not in ids:
        ids[line] = len(lines)
        lines.append(line)
    return ids[line]


encode(root)
print(f"# scripts/crd-schema.py: {path} at lws {tag}")
print("\n".join(lines))
