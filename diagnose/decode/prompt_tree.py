"""The prompts of a decode batch, their shared tokens stored and attended once: one session.

The prompts of a batch form a two-level tree:

* the **root**: their longest common token prefix (at most all but one token of the
  shortest prompt, so that every prompt has a branch that gives its first logits),
  prefilled once;
* a **branch** per prompt: its remaining tokens, prefilled on copies of the root's
  cache (the model's own attention, as a chunked prefill; branches of similar
  length in one right-padded forward, :func:`branch_chunks`), kept once for its rows;
* a **suffix** per row: the tokens it generated, in an ordinary per-row cache.

One prompt with many rows is the tree of one branch (:meth:`PromptTree.whole`): no
root, the whole prompt its branch, prefilled in one forward by the backend
(:meth:`~diagnose.decode.backend.TransformersBackend.start`) and kept as the model's
cache kept it (a sliding layer only its last keys). Every in-process batch, of one
prompt or several, decodes through :class:`TreeSession`.

Each decode step, every row's query attends to the root once for all rows (one
kernel call per kv head, with every row's query stacked), to its prompt's branch
once for that prompt's rows, and to its own suffix; the blocks are merged by their
log-sum-exp (:func:`merge`), so the result equals attention over the prompt and
the suffix concatenated. When every live prompt has as many rows as the others,
the branches are attended in one batched product over the branches padded to the
longest (the padding masked), instead of prompt by prompt. Rows sit at their own positions (prompts differ in
length), so a sliding window is measured from each prompt's position: windowed
layers attend to the root per prompt, with that prompt's cut.

The tree is the :class:`~diagnose.decode.shared_prefix.Prefix` that
:func:`diagnose.decode.shared_prefix.shared_prefix_attention` attends over (its ``attend``).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, Sequence

import torch

from diagnose.decode import batch_invariant
from diagnose.decode.shared_prefix import PrefixLayer, prefix_attention


def root_length(prompts: Sequence[Sequence[int]]) -> int:
    """Tokens every prompt starts with, leaving each prompt at least one token of its own."""
    shortest = min(len(p) for p in prompts)
    length = 0
    while length < shortest - 1 and all(p[length] == prompts[0][length] for p in prompts):
        length += 1
    return length


def merge(a: tuple[torch.Tensor, torch.Tensor], b: tuple[torch.Tensor, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
    """One attention block from two over disjoint keys: normalised outputs (.., dv) weighted
    by their log-sum-exps (.., 1). An empty block (log-sum-exp -inf) weighs nothing."""
    (out_a, lse_a), (out_b, lse_b) = a, b
    top = torch.maximum(lse_a, lse_b)
    top = torch.where(torch.isfinite(top), top, torch.zeros_like(top))
    weight_a, weight_b = torch.exp(lse_a - top), torch.exp(lse_b - top)
    total = weight_a + weight_b
    safe = torch.where(total > 0, total, torch.ones_like(total))
    return (out_a * weight_a + out_b * weight_b) / safe, top + torch.log(total)


def _padded(tensor: torch.Tensor, width: int) -> torch.Tensor:
    """(1, kv_heads, L, d) zero-padded along L to ``width``."""
    return torch.nn.functional.pad(tensor, (0, 0, 0, width - tensor.shape[2]))


def _windowed(layer: PrefixLayer, position: int, window: int | None) -> tuple[torch.Tensor, torch.Tensor]:
    """The layer's keys and values that a query at ``position`` sees: positions > position - window."""
    if window is None:
        return layer.keys, layer.values
    drop = max(0, position - window + 1 - layer.start)
    return layer.keys[:, :, drop:], layer.values[:, :, drop:]


@dataclass
class PromptTree:
    """The root's and every branch's keys and values per layer, and where each row stands."""

    root: list[PrefixLayer] | None
    """Per layer (None: the prompts share no token)."""
    branches: list[list[PrefixLayer]]
    """Per prompt, per layer."""
    lengths: list[int]
    """Each prompt's length in tokens."""
    row_prompts: list[int]
    """The prompt of each live row, in batch order."""
    step: int = 0
    """Tokens generated so far: a row of prompt p decodes position ``lengths[p] + step``."""
    _spans: list[tuple[int, int, int]] = field(default_factory=list, repr=False)
    _packed: dict[int, tuple[torch.Tensor, torch.Tensor, torch.Tensor]] = field(default_factory=dict, repr=False)
    """Per layer, the live prompts' branches padded into one tensor (see :meth:`_uniform`)."""

    def __post_init__(self) -> None:
        self._spans = self._runs()

    @classmethod
    def whole(cls, layers: list[PrefixLayer], length: int, rows: int) -> PromptTree:
        """One prompt of ``length`` tokens, prefilled whole (``layers``: its keys and values per layer),
        for ``rows`` rows: the tree of one branch and no root."""
        return cls(None, [layers], [length], [0] * rows)

    def position(self, prompt: int) -> int:
        """The position a row of ``prompt`` decodes at this step."""
        return self.lengths[prompt] + self.step

    def positions(self) -> torch.Tensor:
        """Each live row's position (LongTensor[B, 1])."""
        return torch.tensor([[self.position(p)] for p in self.row_prompts], dtype=torch.long)

    def keep(self, rows: Sequence[int]) -> None:
        before = [p for p, _, _ in self._spans]
        self.row_prompts = [self.row_prompts[i] for i in rows]
        self._spans = self._runs()
        if [p for p, _, _ in self._spans] != before:
            self._packed.clear()

    def _uniform(self) -> bool:
        """Whether every live prompt has one run of rows, all of one size: then the branches are
        attended as one padded batch (one product for all prompts), not prompt by prompt."""
        sizes = {end - first for _, first, end in self._spans}
        return len(sizes) == 1 and len(self._spans) == len({p for p, _, _ in self._spans}) > 1

    def _packed_layer(self, layer_index: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """The live prompts' branch keys and values (P, kv_heads, L, d), zero-padded to the longest,
        and the additive mask (P, 1, 1, L) that hides the padding."""
        if layer_index not in self._packed:
            layers = [self.branches[p][layer_index] for p, _, _ in self._spans]
            width = max(layer.keys.shape[2] for layer in layers)
            keys = torch.cat([_padded(layer.keys, width) for layer in layers])
            values = torch.cat([_padded(layer.values, width) for layer in layers])
            mask = torch.full((len(layers), 1, 1, width), float("-inf"), device=keys.device)
            for i, layer in enumerate(layers):
                mask[i, ..., : layer.keys.shape[2]] = 0.0
            self._packed[layer_index] = (keys, values, mask)
        return self._packed[layer_index]

    def _branches_at_once(self, layer_index: int, q: torch.Tensor, scale: float,
                          softcap: float | None) -> tuple[torch.Tensor, torch.Tensor]:
        """Every live prompt's branch attention in one batched product (float32), rows in batch order."""
        keys, values, mask = self._packed_layer(layer_index)
        prompts, kv_heads = keys.shape[0], q.shape[0]
        per = q.shape[1] // prompts
        qp = q.float().reshape(kv_heads, prompts, per, q.shape[-1]).transpose(0, 1)  # (P, kvh, rows*group, d)
        scores = torch.matmul(qp, keys.float().transpose(2, 3)) * scale
        if softcap is not None:
            scores = torch.tanh(scores / softcap) * softcap
        scores = scores + mask
        lse = torch.logsumexp(scores, dim=-1, keepdim=True)
        out = torch.matmul(torch.exp(scores - lse), values.float())  # (P, kvh, rows*group, dv)
        return (out.transpose(0, 1).reshape(kv_heads, q.shape[1], -1),
                lse.transpose(0, 1).reshape(kv_heads, q.shape[1], 1))

    def _runs(self) -> list[tuple[int, int, int]]:
        """(prompt, first row, end row) of each run of consecutive rows of one prompt."""
        runs: list[tuple[int, int, int]] = []
        for row, prompt in enumerate(self.row_prompts):
            if runs and runs[-1][0] == prompt:
                runs[-1] = (prompt, runs[-1][1], row + 1)
            else:
                runs.append((prompt, row, row + 1))
        return runs

    def attend(self, layer_index: int, q: torch.Tensor, scale: float, softcap: float | None,
               window: int | None) -> tuple[torch.Tensor, torch.Tensor]:
        """Attention of the rows' queries (kv_heads, B*group, d) over root and branches (see the module
        docstring): normalised output (kv_heads, B*group, dv) and log-sum-exp (kv_heads, B*group, 1)."""
        group = q.shape[1] // len(self.row_prompts)
        root = self.root[layer_index] if self.root is not None else None
        whole_root = prefix_attention(q, root.keys, root.values, scale, softcap) if root and window is None else None
        if window is None and self._uniform():
            branches = self._branches_at_once(layer_index, q, scale, softcap)
            return branches if whole_root is None else merge(whole_root, branches)
        outs, lses = [], []
        for prompt, first, end in self._spans:
            rows = slice(first * group, end * group)
            position = self.position(prompt)
            block = prefix_attention(q[:, rows], *_windowed(self.branches[prompt][layer_index], position, window),
                                     scale, softcap)
            if whole_root is not None:
                block = merge((whole_root[0][:, rows], whole_root[1][:, rows]), block)
            elif root is not None:
                block = merge(prefix_attention(q[:, rows], *_windowed(root, position, window), scale, softcap), block)
            outs.append(block[0])
            lses.append(block[1])
        if len(outs) == 1:
            return outs[0], lses[0]
        return torch.cat(outs, dim=1), torch.cat(lses, dim=1)


PAD_SLACK = 1.25
"""Branches prefill together while their padded tokens stay within this factor of their real ones."""


def branch_chunks(lengths: Sequence[int], slack: float = PAD_SLACK) -> list[list[int]]:
    """Prompt indices per branch prefill batch: longest first, a batch closed where padding every
    branch to its longest would cost more than ``slack`` times the real tokens."""
    chunks: list[list[int]] = []
    real = 0
    for i in sorted(range(len(lengths)), key=lambda i: -lengths[i]):
        if chunks and (len(chunks[-1]) + 1) * lengths[chunks[-1][0]] <= slack * (real + lengths[i]):
            chunks[-1].append(i)
            real += lengths[i]
        else:
            chunks.append([i])
            real = lengths[i]
    return chunks


def _layers(cache: Any, row: int, first: int, end: int) -> list[PrefixLayer]:
    """Each cache layer's keys and values of batch row ``row`` at positions [first, end), copied
    out (a view would keep the padded batch alive) in float32, the prefix attention's own
    precision (as :func:`~diagnose.decode.shared_prefix.prefix_layers` keeps them)."""
    return [PrefixLayer(layer.keys[row:row + 1, :, first:end].to(torch.float32, copy=True),
                        layer.values[row:row + 1, :, first:end].to(torch.float32, copy=True), first)
            for layer in cache.layers]


@torch.inference_mode()
def prefill_tree(model: Any, prompts: Sequence[Sequence[int]], rows: Sequence[int],
                 device: str) -> tuple[PromptTree, torch.Tensor]:
    """Prefill the root once and the branches on it, several in one forward (right-padded: a
    padded position comes after every real one, so no real token sees it); returns the tree and
    the first logits FloatTensor[sum(rows), V], each prompt's repeated for its ``rows``."""
    from transformers import DynamicCache

    length = root_length(prompts)
    # Plain layers (no config): a padded batch must keep every key; sliding windows cut at attention.
    root_cache = DynamicCache()
    root = None
    if length:
        model(input_ids=torch.tensor([list(prompts[0][:length])], device=device), cache=root_cache,
              use_cache=True, logits_to_keep=1)
        root = _layers(root_cache, 0, 0, length)
    sizes = [len(p) - length for p in prompts]
    branches: list[list[PrefixLayer]] = [[] for _ in prompts]
    first: list[torch.Tensor] = [torch.empty(0)] * len(prompts)
    for chunk in branch_chunks(sizes):
        width = sizes[chunk[0]]
        ids = torch.zeros((len(chunk), width), dtype=torch.long)
        for row, i in enumerate(chunk):
            ids[row, : sizes[i]] = torch.tensor(list(prompts[i][length:]))
        cache = copy.deepcopy(root_cache) if length else DynamicCache()
        if length and len(chunk) > 1:
            cache.batch_repeat_interleave(len(chunk))
        ends = sorted({sizes[i] - 1 for i in chunk})
        out = model(input_ids=ids.to(device), position_ids=torch.arange(length, length + width, device=device).expand(len(chunk), -1),
                    cache=cache, use_cache=True, logits_to_keep=torch.tensor(ends, device=device))
        for row, i in enumerate(chunk):
            branches[i] = _layers(out.cache, row, length, len(prompts[i]))
            first[i] = out.logits[row, ends.index(sizes[i] - 1)].float().cpu()
    logits = torch.cat([first[i].unsqueeze(0).expand(count, -1) for i, count in enumerate(rows)])
    row_prompts = [p for p, count in enumerate(rows) for _ in range(count)]
    return PromptTree(root, branches, [len(p) for p in prompts], row_prompts), logits


class TreeSession:
    """Rows of the prompts of a tree (one prompt: a tree of one branch) that attend to the tree once
    plus their own suffix cache: the backend's session wherever shared-prefix attention decodes."""

    def __init__(self, model: Any, tree: PromptTree, device: str) -> None:
        from transformers import DynamicCache

        self._model = model
        self._tree = tree
        self._device = device
        self._cache = DynamicCache(config=model.config)

    @torch.inference_mode()
    def advance(self, tokens: torch.Tensor) -> torch.Tensor:
        with batch_invariant.decoding():
            out = self._model(
                input_ids=tokens.to(self._device).view(-1, 1),
                position_ids=self._tree.positions().to(self._device),
                cache=self._cache,
                use_cache=True,
                shared_prefix=self._tree,
            )
        self._cache = out.cache
        self._tree.step += 1
        return out.logits[:, -1, :].float().cpu()

    def keep(self, rows: torch.Tensor) -> None:
        if self._cache.get_seq_length() > 0:  # before the first step there is no suffix yet
            self._cache.batch_select_indices(rows.to(self._device))
        self._tree.keep(rows.tolist())
