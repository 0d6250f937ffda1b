/* Documents' joint log-likelihoods, in C (textnb.models): each row of a CSR matrix times the
 * weights of its terms, summed per class.
 *
 * The Python code is the definition, and the fallback where this module is not built: there
 * numpy.bincount adds a row's products x_j·w_c[k_j] one by one in the row's order, from 0.0,
 * and so does this loop, so the sums are the same to the bit (no fused multiply-add: the build
 * passes -ffp-contract=off). tests/test_models.py checks that both give the same scores.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

static inline Py_ssize_t
item(const Py_buffer *b, Py_ssize_t i)
{
    return b->itemsize == 4 ? (Py_ssize_t)((const int32_t *)b->buf)[i]
                            : (Py_ssize_t)((const int64_t *)b->buf)[i];
}

static PyObject *
jll(PyObject *self, PyObject *args)
{
    Py_buffer b[5];
    PyObject *objects[5], *result = NULL;
    int got = 0;
    if (!PyArg_ParseTuple(args, "OOOOO:jll", &objects[0], &objects[1], &objects[2], &objects[3],
                          &objects[4]))
        return NULL;
    for (; got < 5; got++) {
        int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (got == 4 ? PyBUF_WRITABLE : 0);
        if (PyObject_GetBuffer(objects[got], &b[got], flags) < 0)
            goto done;
        char type = b[got].format[strlen(b[got].format) - 1];
        int ok = got == 1 ? b[got].itemsize == 8 && strchr("lq", type)       /* columns */
               : got == 2 ? (b[got].itemsize == 8 && strchr("lq", type)) ||  /* indptr */
                            (b[got].itemsize == 4 && strchr("il", type))
               : b[got].itemsize == 8 && type == 'd';                       /* floats */
        if (!ok) {
            PyErr_Format(PyExc_ValueError, "jll: argument %d has the wrong type", got + 1);
            got++;
            goto done;
        }
    }
    Py_ssize_t n_entries = b[0].len / 8, n_rows = b[2].len / b[2].itemsize - 1;
    Py_ssize_t n_classes = b[3].ndim == 2 ? b[3].shape[0] : 0;
    Py_ssize_t n_used = b[3].ndim == 2 ? b[3].shape[1] : 0;
    if (b[1].len / 8 != n_entries || n_rows < 0 || b[3].ndim != 2 ||
            b[4].len / 8 != n_rows * n_classes) {
        PyErr_SetString(PyExc_ValueError, "jll(values, columns, indptr, weights, out): values "
                        "and columns a value each, weights (classes, terms), out (rows, classes)");
        goto done;
    }
    const double *x = b[0].buf, *w = b[3].buf;
    const int64_t *column = b[1].buf;
    double *out = b[4].buf;
    for (Py_ssize_t r = 0; r <= n_rows; r++) {
        Py_ssize_t at = item(&b[2], r);
        if (at < 0 || at > n_entries || (r && at < item(&b[2], r - 1))) {
            PyErr_SetString(PyExc_ValueError, "indptr must ascend within the values");
            goto done;
        }
    }
    for (Py_ssize_t j = 0; j < n_entries; j++)
        if (column[j] < 0 || column[j] >= n_used) {
            PyErr_SetString(PyExc_ValueError, "a column outside the weights");
            goto done;
        }
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t r = 0; r < n_rows; r++) {
        double *row = out + r * n_classes;
        Py_ssize_t start = item(&b[2], r), stop = item(&b[2], r + 1);
        for (Py_ssize_t c = 0; c < n_classes; c++)
            row[c] = 0.0;
        for (Py_ssize_t j = start; j < stop; j++)
            for (Py_ssize_t c = 0; c < n_classes; c++)
                row[c] += x[j] * w[c * n_used + column[j]];
    }
    Py_END_ALLOW_THREADS
    result = Py_NewRef(Py_None);
done:
    for (int i = 0; i < got; i++)
        PyBuffer_Release(&b[i]);
    return result;
}

static PyMethodDef methods[] = {
    {"jll", jll, METH_VARARGS,
     "jll(values, columns, indptr, weights, out): out[r, c] = the sum over row r's entries j "
     "(indptr[r]:indptr[r + 1]) of values[j] * weights[c, columns[j]], added in order from "
     "0.0. values float64, columns int64, indptr int32 or int64, weights float64 (classes, "
     "terms) and out float64 (rows, classes), C order."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_scores", NULL, -1, methods,
                                    NULL, NULL, NULL, NULL};

PyMODINIT_FUNC
PyInit__scores(void)
{
    return PyModule_Create(&module);
}
