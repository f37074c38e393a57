"""The README and docs/ stay true to the tree: the README stays an entry page, every relative
link resolves, no page cites a file users of the repository do not have, docs/README.md
indexes every page, docs/cli.md covers every command, option and output file the CLI has,
and every list or number the docs state that the code can change is checked against the
source here. Reads files only: no build needed."""
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
MAX_README_LINES = 200


def pages():
    """README.md and every markdown page under docs/."""
    return [README, *sorted(DOCS.rglob("*.md"))]


def page_id(path):
    return str(path.relative_to(ROOT))


def text_of(path):
    return path.read_text(encoding="utf-8")


def without_code(text):
    """The text outside fenced code blocks and inline code spans (where brackets are not links)."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    return re.sub(r"`[^`\n]*`", "", text)


LINK = re.compile(r"\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")


def relative_links(path):
    """(target path, anchor) of every relative markdown link on a page."""
    for target in LINK.findall(without_code(text_of(path))):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):  # http:, https:, mailto:, ...
            continue
        file_part, _, anchor = target.partition("#")
        yield file_part, anchor


def resolve(page, file_part):
    return (page.parent / file_part).resolve() if file_part else page.resolve()


def slug(heading):
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[`*]", "", heading.strip()).lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path):
    found = set()
    for line in without_code_blocks(text_of(path)).splitlines():
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if m:
            base = slug(m.group(1))
            n, name = 0, base
            while name in found:
                n += 1
                name = f"{base}-{n}"
            found.add(name)
    return found


def without_code_blocks(text):
    return re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)


# ---- the README as the entry ----

def test_readme_is_short():
    lines = text_of(README).count("\n")
    assert lines <= MAX_README_LINES, f"README.md has {lines} lines; at most {MAX_README_LINES}: move the rest to docs/"


def test_readme_keeps_the_two_commands_first():
    text = text_of(README)
    assert "make demo" in text and "make test" in text
    assert text.index("make demo") < text.index("## ")


# ---- links ----

@pytest.mark.parametrize("page", pages(), ids=page_id)
def test_relative_links_resolve(page):
    missing = []
    for file_part, _ in relative_links(page):
        target = resolve(page, file_part)
        if not target.exists():
            missing.append(file_part)
        elif ROOT not in target.parents and target != ROOT:
            missing.append(f"{file_part} (outside the repository)")
    assert not missing, f"{page_id(page)}: links that do not resolve: {missing}"


# docs/scenario-reference.md is generated (scripts/schema_doc.py) and checked by its own test.
@pytest.mark.parametrize("page", [p for p in pages() if p.name != "scenario-reference.md"], ids=page_id)
def test_anchors_of_markdown_links_exist(page):
    wrong = []
    for file_part, anchor in relative_links(page):
        target = resolve(page, file_part)
        if not anchor or target.suffix != ".md" or not target.is_file():
            continue
        if anchor not in anchors(target):
            wrong.append(f"{file_part}#{anchor}")
    assert not wrong, f"{page_id(page)}: anchors no heading gives: {wrong}"


@pytest.mark.parametrize("page", pages(), ids=page_id)
def test_no_files_users_do_not_have(page):
    text = text_of(page)
    for name in ("SCENARIOS.md", "DESIGN.md", "../shared/", "shared/DESIGN", "shared/SCENARIOS"):
        assert name not in text, f"{page_id(page)} cites {name}, which users of the repository do not have"


@pytest.mark.parametrize("page", pages(), ids=page_id)
def test_scenario_files_named_exist(page):
    named = set(re.findall(r"scenarios/([\w.-]+\.json)", text_of(page)))
    missing = sorted(n for n in named if not (ROOT / "scenarios" / n).is_file())
    assert not missing, f"{page_id(page)} names scenario files that do not exist: {missing}"


@pytest.mark.parametrize("page", pages(), ids=page_id)
def test_repository_paths_named_exist(page):
    """Every path into the repository a page names in backticks (`sim/world/run.hpp`,
    `tests/cpp/world/...`) exists: a file moved without its docs fails here."""
    roots = ("sim/", "topology/", "workloads/", "cli/", "python/", "tests/", "bench/", "fuzz/",
             "scripts/", "data/", "notebooks/", "results/", "docs/", "cmake/")
    named = {m for m in re.findall(r"`([\w./-]+\.\w+)`", text_of(page)) if m.startswith(roots)}
    missing = sorted(n for n in named if not (ROOT / n).exists())
    assert not missing, f"{page_id(page)} names files that do not exist: {missing}"


def test_docs_index_links_every_page():
    index = DOCS / "README.md"
    linked = {resolve(index, f) for f, _ in relative_links(index)}
    unlisted = [p.name for p in sorted(DOCS.glob("*.md")) if p != index and p.resolve() not in linked]
    assert not unlisted, f"docs/README.md does not link: {unlisted}"


def test_readme_links_every_domain_page():
    linked = {resolve(README, f) for f, _ in relative_links(README)}
    for name in ("network", "topologies", "training", "fleets", "serving", "jobs", "python", "cli",
                 "benchmarks", "limits", "architecture", "scenarios"):
        assert (DOCS / f"{name}.md").resolve() in linked, f"README.md does not link docs/{name}.md"


# ---- the command line ----

ARGS = ROOT / "cli" / "args.cpp"
MAIN = ROOT / "cli" / "main.cpp"
CLI_DOC = DOCS / "cli.md"


def subcommands():
    """{variable: name} of every subcommand cli/args.cpp declares (what `clustersim --help` lists)."""
    src = text_of(ARGS)
    found = dict(re.findall(r"auto\*\s*(\w+)\s*=\s*app\.add_subcommand\(\s*\"([\w-]+)\"", src))
    assert len(set(re.findall(r"add_subcommand\(\s*\"([\w-]+)\"", src))) == len(found), \
        "a subcommand declared otherwise than `auto* var = app.add_subcommand(\"name\", ...)`"
    return found


def cli_sections():
    """{command: its section's text} of docs/cli.md, from its `## \\`name\\`` headings."""
    parts = re.split(r"^## `([\w-]+)`\s*$", text_of(CLI_DOC), flags=re.M)
    return {parts[i]: parts[i + 1] for i in range(1, len(parts), 2)}


def test_cli_args_declare_the_commands():
    assert {"run", "validate", "schema", "topo", "sweep", "plan", "compare"} <= set(subcommands().values())


@pytest.mark.parametrize("command", sorted(subcommands().values()))
def test_cli_doc_has_a_section_per_command(command):
    assert command in cli_sections(), f"docs/cli.md has no `## \\`{command}\\`` section"
    assert f"`{command}`" in text_of(DOCS / "README.md"), f"docs/README.md does not name `{command}`"


def options():
    """(command, long option) of every option and flag cli/args.cpp declares."""
    names = subcommands()
    for var, spec in re.findall(r"(\w+)->add_(?:option|flag)\(\s*\"([^\"]+)\"", text_of(ARGS)):
        flags = [f for f in spec.split(",") if f.startswith("-")]
        if var in names and flags:
            yield names[var], max(flags, key=len)


@pytest.mark.parametrize("command,option", sorted(set(options())))
def test_cli_doc_documents_every_option(command, option):
    section = cli_sections().get(command, "")
    assert option in section, f"docs/cli.md's `{command}` section does not document {option}"


def test_cli_doc_names_every_output_file():
    src = text_of(MAIN)
    m = re.search(r"for\s*\(\s*const char\*\s*name\s*:\s*\{([^}]*)\}", src)
    assert m, "cli/main.cpp's list of --out files not found"
    files = re.findall(r"\"([^\"]+)\"", m.group(1))
    assert "summary.json" in files and "jobs.csv" in files
    run = cli_sections()["run"]
    for name in files:
        assert f"`{name}`" in run, f"docs/cli.md's `run` section does not describe {name}"


def cpp_sources():
    for top in ("sim", "cli", "python", "topology", "workloads"):
        yield from (ROOT / top).rglob("*.cpp")


def merged_literals(text):
    """C++ source with adjacent string literals joined ("a" "b" -> "ab")."""
    return re.sub(r"\"\s*\n?\s*\"", "", text)


def csv_header(first_columns):
    """The header row a CSV writer in the C++ sources starts with `first_columns`."""
    pattern = re.compile(r"\"(" + re.escape(first_columns) + r"[^\"\\]*)\\n\"")
    for path in cpp_sources():
        m = pattern.search(merged_literals(text_of(path)))
        if m:
            return m.group(1)
    raise AssertionError(f"no CSV writer whose header starts {first_columns!r}")


@pytest.mark.parametrize("first", ["series,time_s,value", "link,from,to,", "flow,src,dst,", "job,class,queue,"])
def test_cli_doc_gives_each_csv_header_as_written(first):
    header = csv_header(first)
    assert header in text_of(CLI_DOC), f"docs/cli.md does not give the header {header!r}"


def test_jobs_doc_lists_jobs_csv_columns():
    columns = csv_header("job,class,queue,").split(",")
    jobs = text_of(DOCS / "jobs.md")
    missing = [c for c in columns if f"`{c}`" not in jobs]
    assert not missing, f"docs/jobs.md does not name the jobs.csv columns {missing}"


def test_cli_doc_gives_plan_csv_columns():
    for path in cpp_sources():
        m = re.search(r"kColumns\[\]\s*=\s*\{([^}]*)\}", text_of(path))
        if m and "tokens_per_s" in m.group(1):
            header = ",".join(re.findall(r"\"([^\"]+)\"", m.group(1)))
            assert header in cli_sections()["plan"], f"docs/cli.md's `plan` does not give {header!r}"
            return
    raise AssertionError("the plan search's CSV columns (kColumns) not found")


# ---- lists and numbers the docs state ----

def test_bench_programs_documented():
    bench = text_of(DOCS / "benchmarks.md")
    programs = sorted(p.stem for p in (ROOT / "bench").glob("bench_*.cpp"))
    assert programs
    missing = [p for p in programs if f"`{p}`" not in bench]
    assert not missing, f"docs/benchmarks.md does not describe {missing}"
    recipe = re.search(r"^bench:.*?\n((?:\t.*\n)+)", text_of(ROOT / "Makefile"), flags=re.M)
    assert recipe, "Makefile's bench target not found"
    run = re.findall(r"/bench/(bench_\w+)", recipe.group(1))
    intro = bench.split("\n## ")[0]
    missing = [p for p in run if f"`{p}" not in intro]
    assert not missing, f"docs/benchmarks.md does not say `make bench` runs {missing}"
    stated = re.findall(r"`(bench_\w+)", intro.split("the others")[0])
    assert sorted(set(stated)) == sorted(set(run)), f"docs/benchmarks.md says `make bench` runs {stated}, the Makefile {run}"


def test_notebooks_listed():
    python = text_of(DOCS / "python.md")
    notebooks = sorted(p.name for p in (ROOT / "notebooks").glob("*.ipynb"))
    assert notebooks
    missing = [n for n in notebooks if f"notebooks/{n}" not in python]
    assert not missing, f"docs/python.md does not list the notebooks {missing}"


def test_model_presets_listed():
    src = next((text_of(p) for p in cpp_sources() if "model_presets()" in text_of(p)
                and re.search(r"std::vector<TransformerSpec>\s+model_presets\(\)\s*\{", text_of(p))), None)
    assert src, "model_presets() not found"
    body = src[src.index("model_presets() {"):]
    body = body[:body.index("\n}\n")]
    presets = set(re.findall(r"\.name = \"([\w.-]+)\"", body)) | set(re.findall(r"llama\(\"([\w.-]+)\"", body))
    assert "gpt3-175b" in presets
    training = text_of(DOCS / "training.md")
    m = re.search(r"cited presets \(([^)]*)\)", training)
    assert m, "docs/training.md's list of presets not found"
    listed = set(re.findall(r"`([\w.-]+)`", m.group(1)))
    assert listed == presets, f"docs/training.md lists presets {sorted(listed)}, the code has {sorted(presets)}"


# (page, what the page says, a file pattern and the source pattern that must hold)
STATED = [
    ("limits.md", "at most 1 M points", "sim/**/*.hpp", r"kMaxGridPoints\s*=\s*1'000'000"),
    ("limits.md", "at most 100,000 samples\n  per series", "sim/**/*.hpp", r"kDefaultMaxSamples\s*=\s*100000\b"),
    ("cli.md", "within 100,000\nsamples per series", "sim/**/*.hpp", r"kDefaultMaxSamples\s*=\s*100000\b"),
    ("limits.md", "`run.max_memory` (default 8 GB)", "scenarios/schema.json",
     r"\"max_memory\":\s*\{[^}]*\"default\":\s*\"8GB\""),
    ("limits.md", "up to 2 M cables", "sim/**/*.hpp", r"kMaxValidateBuildCables\s*=\s*2e6\b"),
    ("limits.md", "every 4,096 events", "sim/engine/*.hpp", r"every_events\s*=\s*4096\b"),
    ("limits.md", "every 100 ms", "python/*.cpp", r"milliseconds\(100\)"),
    ("limits.md", "4 GB\naddress-space limit", "tests/python/hostile_cli.py", r"MEMORY_LIMIT\s*=\s*4 << 30\b"),
    ("network.md", "over 257+ ranks", "sim/network/*.hpp", r"kExchangePairs\s*=\s*std::size_t\{1\}\s*<<\s*16\b"),
    ("topologies.md", "max-flow up to 65,536 switch cables", "topology/*.hpp", r"kMaxFlowCables\s*=\s*1\s*<<\s*16\b"),
    ("serving.md", "exact nearest-rank up to 100,000 requests", "sim/**/quantile_sketch*.hpp",
     r"exact_limit\s*=\s*100000\b"),
]


@pytest.mark.parametrize("page,phrase,files,pattern", STATED, ids=[f"{s[0]}: {s[1].split()[-1]}" for s in STATED])
def test_stated_numbers_match_the_source(page, phrase, files, pattern):
    doc = re.sub(r"\s+", " ", text_of(DOCS / page))
    assert re.sub(r"\s+", " ", phrase) in doc, f"docs/{page} no longer says {phrase!r}: update this test"
    for path in ROOT.glob(files):
        if re.search(pattern, text_of(path)):
            return
    raise AssertionError(f"docs/{page} says {phrase!r}, but no {files} matches {pattern!r}")


def test_no_stale_counts_of_tree_files():
    """Counts of files in the tree are not stated (they went stale before): say "every file"."""
    for page in pages():
        text = re.sub(r"\s+", " ", text_of(page))
        for what in ("malformed scenarios", "malformed inputs", "shipped scenarios", "notebooks",
                     "scenario files", "GPUs in the catalog", "cases"):
            m = re.search(r"\b\d[\d,]* " + what, text)
            assert not m, f"{page_id(page)} states a count that goes stale: {m.group(0)!r}"


def test_readme_validation_figures_are_the_validation_pages():
    # The README quotes results/validation.md's headline errors; a page regenerated (or merged)
    # without the README, or the other way round, fails here.
    page = text_of(ROOT / "results" / "validation.md")
    readme = " ".join(text_of(README).split())

    def find(pattern, text, where):
        m = re.search(pattern, text)
        assert m, f"{where}: no match for {pattern!r}"
        return m.groups()

    mean, rows = find(r"Mean absolute error: \*\*([\d.]+)%\*\* over (\d+) rows", page, "validation.md")
    h100, a100, tpu = (find(rf"{name}[^%]*?: ([\d.]+)% over {n}", page, "validation.md")[0]
                       for name, n in (("H100", 26), ("A100", 12), ("TPU slices", 8)))
    assert f"steps {mean}% off on average against {rows} published runs ({h100}% on NVIDIA's H100" in readme
    assert f"{a100}% on the Megatron-LM papers' A100, {tpu}% on MaxText" in readme
    trainium, = find(r"reported apart: \*\*([\d.]+)%\*\* over 5 rows", page, "validation.md")
    assert f"training {trainium}% off" in readme
    vllm_n, vllm = find(r"Mean absolute error over these (\d+) figures: ([\d.]+)% \(one GPU", page, "validation.md")
    assert f"LLM serving {vllm}% off on average against {vllm_n} published vLLM figures" in readme
    neuron_n, neuron = find(r"Mean absolute error over these (\d+) figures: ([\d.]+)% \(Trainium1", page,
                            "validation.md")
    assert f"serving {neuron}% off over every BF16 row" in readme and f"({neuron_n} figures;" in readme
    thr_n, thr = find(r"over the (\d+) whose figures agree with one another: ([\d.]+)%", page, "validation.md")
    assert f"output throughput {thr}% off over the {thr_n} rows whose published" in readme
