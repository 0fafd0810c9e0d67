"""The JSON shapes of the whole-repository views (a part of the audit report; trusted: code
wrote every field). Each section names the tool that produced it and what it did not look at."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

Level = Literal["high", "medium", "low"]


class Section(BaseModel):
    """What every view says about itself."""

    produced_by: str = ""  # the tool (and version) or "rlm (ast)"
    status: Literal["ok", "missing", "failed", "not_applicable"] = "ok"
    note: str = ""  # why it is missing / failed / not applicable
    not_looked_at: list[str] = Field(default_factory=list)


class ToolRun(BaseModel):
    name: str
    version: str = ""
    status: Literal["ran", "missing", "failed"] = "ran"
    detail: str = ""
    wall_s: float = 0.0


class AnalyzerFinding(BaseModel):
    tool: str  # ruff | vulture | radon
    rule: str  # ruff's code (S105, F821), vulture's kind, radon's rank
    message: str  # the analyzer's own words
    path: str
    line: int
    end_line: int
    severity: Level
    confidence: Level
    basis: str  # where the severity comes from ("bandit B105: severity LOW, confidence MEDIUM")
    kind: Literal["security", "correctness", "dead_code", "complexity"]
    url: str = ""


class Analyzers(Section):
    findings: list[AnalyzerFinding] = Field(default_factory=list)
    by_rule: dict[str, int] = Field(default_factory=dict)
    selected: list[str] = Field(default_factory=list)  # the rule families asked for


class FunctionComplexity(BaseModel):
    name: str
    path: str
    line: int
    end_line: int
    complexity: int
    rank: str  # radon's A-F


class Complexity(Section):
    functions: int = 0
    mean: float = 0.0
    by_rank: dict[str, int] = Field(default_factory=dict)
    top: list[FunctionComplexity] = Field(default_factory=list)
    per_file: dict[str, int] = Field(default_factory=dict)  # summed complexity, for hotspots


class GraphNode(BaseModel):
    id: str  # dotted module name
    path: str
    package: str  # the top-level package ("" for a loose module)
    lines: int
    is_test: bool = False
    layer: int = 0  # 0: imports no other module of the repository
    imports: int = 0  # distinct repository modules it imports
    imported_by: int = 0  # distinct non-test repository modules importing it


class GraphEdge(BaseModel):
    source: str
    target: str
    line: int  # the first import line in the source file
    kind: Literal["module", "function", "type_checking"]  # where the import statement sits


class ModuleGraph(Section):
    nodes: list[GraphNode] = Field(default_factory=list)
    edges: list[GraphEdge] = Field(default_factory=list)
    layers: list[list[str]] = Field(default_factory=list)  # non-test modules, layer 0 first
    cycles: list[list[str]] = Field(default_factory=list)  # strongly connected, run-time edges
    most_imported: list[str] = Field(default_factory=list)


class EntryPoint(BaseModel):
    kind: Literal["console_script", "gui_script", "main_module", "main_guard", "cli_command",
                  "http_route", "plugin"]
    name: str
    target: str = ""
    path: str
    line: int


class EntryPoints(Section):
    items: list[EntryPoint] = Field(default_factory=list)


class ApiName(BaseModel):
    name: str
    defined_in: str = ""  # the module the package's __init__ imports it from, when code saw it
    line: int = 0  # its line in the package's __init__


class PackageApi(BaseModel):
    package: str
    path: str
    source: Literal["__all__", "public names"]
    names: list[ApiName] = Field(default_factory=list)


class PublicApi(Section):
    packages: list[PackageApi] = Field(default_factory=list)


class DeclaredDep(BaseModel):
    name: str
    spec: str
    group: str = ""  # "" for the default install, else the extra / group / requirements file
    path: str
    line: int
    import_names: list[str] = Field(default_factory=list)
    import_basis: str = ""  # installed metadata | its name | known alias
    used_in: list[str] = Field(default_factory=list)  # files importing it (tests apart)
    used_in_tests: list[str] = Field(default_factory=list)


class UndeclaredImport(BaseModel):
    name: str  # the top-level import name
    used_in: list[str] = Field(default_factory=list)
    optional: bool = False  # every import of it sits in a try/except ImportError
    in_tests_only: bool = False


class Dependencies(Section):
    declared: list[DeclaredDep] = Field(default_factory=list)
    unused: list[str] = Field(default_factory=list)  # declared, no import found
    undeclared: list[UndeclaredImport] = Field(default_factory=list)


class TestReach(BaseModel):
    module: str
    path: str
    direct: list[str] = Field(default_factory=list)  # test files importing it
    reached_by: int = 0  # test files reaching it through imports


class TestMap(Section):
    tests: int = 0
    modules: list[TestReach] = Field(default_factory=list)
    unreached: list[str] = Field(default_factory=list)


class Hotspot(BaseModel):
    path: str
    commits: int
    churn: int  # lines added + deleted
    complexity: int
    score: int  # commits × complexity


class Hotspots(Section):
    commits: int = 0
    files: list[Hotspot] = Field(default_factory=list)


class CodeViews(BaseModel):
    tools: list[ToolRun] = Field(default_factory=list)
    analyzers: Analyzers = Field(default_factory=Analyzers)
    complexity: Complexity = Field(default_factory=Complexity)
    dead_code: Analyzers = Field(default_factory=Analyzers)
    graph: ModuleGraph = Field(default_factory=ModuleGraph)
    entry_points: EntryPoints = Field(default_factory=EntryPoints)
    public_api: PublicApi = Field(default_factory=PublicApi)
    dependencies: Dependencies = Field(default_factory=Dependencies)
    test_map: TestMap = Field(default_factory=TestMap)
    hotspots: Hotspots = Field(default_factory=Hotspots)
    wall_s: float = 0.0
