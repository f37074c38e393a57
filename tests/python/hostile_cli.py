"""The CLI as the hostile-input tests run it: each process under a memory limit (4 GB of address
space is plenty for every check: an input that would take more must be refused before it is
spent)."""
import json
import resource
import subprocess
from pathlib import Path

from conftest import CLI

MEMORY_LIMIT = 4 << 30  # bytes of address space per CLI process


def limit_memory():
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def cli(*args, stdout=subprocess.PIPE, **kw):
    return subprocess.run([str(CLI), *map(str, args)], stdout=stdout, stderr=subprocess.PIPE, text=True,
                          timeout=300, preexec_fn=limit_memory, **kw)


def doc(path):
    return json.loads(Path(path).read_text())
