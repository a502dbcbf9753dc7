"""Array views without numba's general reshape (docs/architecture.md §5).

``buf[o:o + size].reshape(shape)`` in compiled code calls numba's general no-copy reshape helper, about
30 ns a call; a flexible-body group takes ~60 such views of its packed buffers per evaluation, which made
view building a visible part of a small model's step. :func:`view` builds the C-contiguous view of a flat
C-contiguous buffer directly (data pointer, shape, strides; it shares the buffer's memory and keeps it
alive like any numba view), :func:`flat` the 1-d view of a C-contiguous array. Neither checks bounds: the
callers' offsets and shapes come from the packing tables (flexmb/compiled/flexible.py ``pack``,
flexmb/solvers/compiled_step.py) that made the buffers.
"""
from __future__ import annotations

from numba import types
from numba.core import cgutils
from numba.core.imputils import impl_ret_borrowed
from numba.extending import intrinsic
from numba.np.arrayobj import make_array, populate_array


def _build(context, builder, src, retty, off, dims, counted=True):
    """The view array of ``retty`` over ``src`` from element ``off`` with the shape ``dims`` (intp values); it
    shares ``src``'s memory and, when ``counted``, holds a reference to it (numba's meminfo), else none."""
    itemsize = src.itemsize
    strides, acc = [], itemsize
    for d in reversed(dims):
        strides.append(acc)
        acc = builder.mul(acc, d)
    out = make_array(retty)(context, builder)
    populate_array(out, data=builder.gep(src.data, [off]), shape=cgutils.pack_array(builder, dims),
                   strides=cgutils.pack_array(builder, strides[::-1]), itemsize=itemsize,
                   meminfo=src.meminfo if counted else None, parent=src.parent if counted else None)
    if counted:
        return impl_ret_borrowed(context, builder, retty, out._getvalue())
    return out._getvalue()


def _view_intrinsic(buf, offset, shape, counted: bool):
    """Signature and code generation of :func:`view` (``counted``) and :func:`borrow` (not counted), or None
    for arguments they do not take."""
    if not (isinstance(buf, types.Array) and buf.ndim == 1 and buf.layout == "C"
            and isinstance(offset, types.Integer) and isinstance(shape, types.BaseTuple)
            and all(isinstance(t, types.Integer) for t in shape.types)):
        return None
    ndim = len(shape.types)
    retty = types.Array(buf.dtype, ndim, "C")

    def codegen(context, builder, sig, args):
        bufty, oty, shty = sig.args
        src = make_array(bufty)(context, builder, args[0])
        dims = [context.cast(builder, d, t, types.intp)
                for d, t in zip(cgutils.unpack_tuple(builder, args[2], ndim), shty.types)]
        return _build(context, builder, src, retty, context.cast(builder, args[1], oty, types.intp), dims, counted)

    return retty(buf, offset, shape), codegen


@intrinsic
def view(typingctx, buf, offset, shape):
    """``buf[offset:offset + prod(shape)].reshape(shape)`` for a 1-d C-contiguous ``buf`` and a tuple of
    integers ``shape`` (no bounds check)."""
    return _view_intrinsic(buf, offset, shape, True)


@intrinsic
def flat(typingctx, arr):
    """``arr.reshape(-1)`` for a C-contiguous array (a view)."""
    if not (isinstance(arr, types.Array) and arr.layout == "C"):
        return None
    retty = types.Array(arr.dtype, 1, "C")

    def codegen(context, builder, sig, args):
        src = make_array(sig.args[0])(context, builder, args[0])
        return _build(context, builder, src, retty, context.get_constant(types.intp, 0), [src.nitems])

    return retty(arr), codegen


@intrinsic
def borrow(typingctx, buf, offset, shape):
    """:func:`view` without a reference to ``buf``'s memory: numba's reference counting of an array is an
    atomic add per copy of it (~8 ns), and a flexible group's evaluation takes ~65 views of its buffers per
    call. For views that live within a call that receives ``buf`` as an argument only (never returned to
    Python, never kept past the call: the memory is not kept alive by the view)."""
    return _view_intrinsic(buf, offset, shape, False)


def _unowned_value(context, builder, typ, value):
    """``value`` of type ``typ`` with every array in it (through nested tuples) without its meminfo and parent."""
    if isinstance(typ, types.Array):
        ary = make_array(typ)(context, builder, value)
        ary.meminfo = cgutils.get_null_value(ary.meminfo.type)
        ary.parent = cgutils.get_null_value(ary.parent.type)
        return ary._getvalue()
    if isinstance(typ, types.BaseTuple):
        items = [_unowned_value(context, builder, t, builder.extract_value(value, i)) for i, t in enumerate(typ.types)]
        return context.make_tuple(builder, typ, items)
    return value


@intrinsic
def unowned(typingctx, x):
    """``x`` (an array, or nested tuples of arrays, None and scalars) with no reference to its arrays' memory,
    of the same type: numba counts references to an array at every copy and at every call that takes it (an
    atomic add each, ~8 ns), and the step's model holds ~110 arrays. For values that live within a call
    whose caller keeps the arrays alive (``blocks.run_block``'s model: the ``CompiledStep`` holds it)."""
    def codegen(context, builder, sig, args):
        return _unowned_value(context, builder, sig.args[0], args[0])

    return x(x), codegen
