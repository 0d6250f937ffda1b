/* Training on error's scan, in C: from a row on, the first document of a two-class walk that
 * the model so far gets wrong or not surely right (textnb.onerror).
 *
 * The Python code is the definition, and the fallback where this module is not built. Each
 * row's lead is computed in the same floating-point operations, in the same order, as there:
 * Σ_j x_j·diff[k_j] summed from 0.0 in the row's order (scipy's CSR matrix-vector product),
 * plus the row's sum times dh, plus db, negated for a ham row. No fused multiply-add: the build
 * passes -ffp-contract=off, and baseline x86-64 has none. tests/test_onerror.py checks that
 * both learn the same documents. Python scored rows in blocks and scored again everything
 * after a block's first error; this loop stops at it.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

/* An integer array's element i, whatever its integer width (scipy uses int32 or int64). */
static inline Py_ssize_t
item(const Py_buffer *b, Py_ssize_t i)
{
    return b->itemsize == 4 ? (Py_ssize_t)((const int32_t *)b->buf)[i]
                            : (Py_ssize_t)((const int64_t *)b->buf)[i];
}

static PyObject *
first_wrong(PyObject *self, PyObject *args)
{
    Py_buffer data, indices, indptr, diff, sums, truth, learned;
    Py_ssize_t start;
    double dh, db, margin;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*y*y*nddd", &data, &indices, &indptr, &diff, &sums,
                          &truth, &learned, &start, &dh, &db, &margin))
        return NULL;
    Py_ssize_t n = learned.len, found = -1;
    const double *x = data.buf, *d = diff.buf, *s = sums.buf;
    const char *done = learned.buf;
    int ok = data.itemsize == 8 && diff.itemsize == 8 && sums.itemsize == 8
             && (truth.itemsize == 4 || truth.itemsize == 8) && learned.itemsize == 1
             && (indices.itemsize == 4 || indices.itemsize == 8)
             && indptr.itemsize == indices.itemsize && indptr.len / indptr.itemsize == n + 1
             && sums.len / 8 == n && truth.len / truth.itemsize == n && start >= 0
             && item(&indptr, n) <= data.len / 8 && item(&indptr, n) <= indices.len / indices.itemsize;
    Py_ssize_t n_terms = diff.len / 8;
    for (Py_ssize_t i = start; ok && i < n; i++) {
        if (done[i])
            continue;
        Py_ssize_t a = item(&indptr, i), b = item(&indptr, i + 1);
        double sum = 0.0;
        for (Py_ssize_t j = a; j < b; j++) {
            Py_ssize_t k = item(&indices, j);
            if (k < 0 || k >= n_terms) {
                ok = 0;
                break;
            }
            sum += x[j] * d[k];
        }
        double lead = sum + s[i] * dh + db;
        if (item(&truth, i) != 1)
            lead = -lead;
        if (ok && lead < margin) {
            found = i;
            break;
        }
    }
    PyBuffer_Release(&data);
    PyBuffer_Release(&indices);
    PyBuffer_Release(&indptr);
    PyBuffer_Release(&diff);
    PyBuffer_Release(&sums);
    PyBuffer_Release(&truth);
    PyBuffer_Release(&learned);
    if (!ok) {
        PyErr_SetString(PyExc_ValueError, "first_wrong: arrays of the wrong type or shape");
        return NULL;
    }
    return PyLong_FromSsize_t(found);
}

static PyMethodDef methods[] = {
    {"first_wrong", first_wrong, METH_VARARGS,
     "first_wrong(data, indices, indptr, diff, sums, truth, learned, start, dh, db, margin) "
     "-> int: the first row i >= start of the CSR matrix (float64 data; int32 or int64 indices "
     "and indptr) not learned (bool) whose lead, (x_i·diff + sums_i·dh + db) for truth 1 and "
     "its negation otherwise (int32 or int64 truth), is under margin; -1 if none."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_onerror", NULL, -1, methods,
                                    NULL, NULL, NULL, NULL};

PyMODINIT_FUNC
PyInit__onerror(void)
{
    return PyModule_Create(&module);
}
