"""Generate the Python gRPC code for every service from `protos/` into `mirrortree/v1/`.

One shared copy serves tree_service, graph_service and the gateway. The generated files are
committed; `--check` regenerates into a temporary folder and fails when anything differs, so
CI catches a proto edited without regenerating.
"""

from __future__ import annotations

import argparse
import filecmp
import sys
import tempfile
from pathlib import Path

from grpc_tools import protoc

ROOT = Path(__file__).resolve().parent.parent
PROTO_ROOT = ROOT / "protos"
PACKAGE_DIR = Path("mirrortree") / "v1"
INIT_TEXT = '"""Generated gRPC code for mirrortree.v1 (scripts/gen_protos.py). Do not edit."""\n'


def generate(out_root: Path) -> list[Path]:
    """Run protoc for every proto file; return the generated files relative to `out_root`."""
    protos = sorted(PROTO_ROOT.glob("mirrortree/v1/*.proto"))
    include = Path(protoc.__file__).parent / "_proto"
    args = [
        "grpc_tools.protoc",
        f"-I{PROTO_ROOT}",
        f"-I{include}",
        f"--python_out={out_root}",
        f"--pyi_out={out_root}",
        f"--grpc_python_out={out_root}",
        *[str(p.relative_to(PROTO_ROOT)) for p in protos],
    ]
    if protoc.main(args) != 0:
        raise SystemExit("protoc failed")
    (out_root / PACKAGE_DIR / "__init__.py").write_text(INIT_TEXT)
    return sorted(p.relative_to(out_root) for p in (out_root / PACKAGE_DIR).glob("*.py*"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true", help="fail if committed code is stale")
    opts = parser.parse_args()
    if not opts.check:
        for old in (ROOT / PACKAGE_DIR).glob("*_pb2*.py*"):
            old.unlink()
        (ROOT / PACKAGE_DIR).mkdir(parents=True, exist_ok=True)
        generate(ROOT)
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        fresh = generate(Path(tmp))
        committed = sorted(
            p.relative_to(ROOT) for p in (ROOT / PACKAGE_DIR).glob("*.py*") if p.is_file()
        )
        stale = [str(p) for p in fresh if not (ROOT / p).exists()]
        stale += [str(p) for p in committed if p not in fresh]
        stale += [
            str(p)
            for p in fresh
            if (ROOT / p).exists() and not filecmp.cmp(Path(tmp) / p, ROOT / p, shallow=False)
        ]
    if stale:
        print("generated code is out of date; run `make protos`:", *stale, sep="\n  ")
        return 1
    print("generated code is up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())
