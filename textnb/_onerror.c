/* Training on error's walks, in C, for two classes: the scan for the next document the model
 * so far gets wrong or not surely right, and, for multinomial and complement models, learning
 * it into the log tables, pass after pass (textnb.nb.on_error).
 *
 * The Python code is the definition, and the fallback where this module is not built. Each
 * step is computed in the same floating-point operations, in the same order, as there: a
 * row's lead is Σ_j x_j·diff[k_j] summed from 0.0 in the row's order (scipy's CSR
 * matrix-vector product), plus the row's sum times h_1 − h_0, plus bias_1 − bias_0, negated
 * for class 0; learning adds the row to the counts and recomputes the logs numpy computes.
 * No fused multiply-add: the build passes -ffp-contract=off, and baseline x86-64 has none.
 * The logarithms are the C library's; numpy's are the same where it does not use its own
 * AVX-512 code, and may differ there in the last bit, which changes what is learned only for a
 * document whose lead is that close to the margin. tests/test_onerror.py checks that both learn
 * the same documents, on real mail too. A walk lets go of the GIL, so walks run in threads;
 * it visits the rows in its order where they lie, as the Python walk visits a copy in it.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

/* An integer array's element i, whatever its integer width (scipy uses int32 or int64). */
static inline Py_ssize_t
item(const Py_buffer *b, Py_ssize_t i)
{
    return b->itemsize == 4 ? (Py_ssize_t)((const int32_t *)b->buf)[i]
                            : (Py_ssize_t)((const int64_t *)b->buf)[i];
}

/* A two-class walk's matrix and tables: the CSR rows, the learned flags (one a place the walk
 * visits: n, the rows it walks, of the matrix's n_rows), and the log tables of
 * textnb.nb.on_error._Tables (G of shape (n_terms, 2), C order). */
typedef struct {
    Py_buffer b[14];
    const double *x, *sums;
    Py_buffer *indices, *indptr, *truth;
    char *learned;
    double *G, *diff, *count, *total, *mass, *h, *bias, *class_count;
    Py_ssize_t n, n_rows, n_terms;
} Walk;

/* The first place p >= start not learned whose row's lead is under margin; -1 if none, -2 at a
 * term number out of range. The walk visits row order[p] at place p (row p without order);
 * learned[] is by place, truth[] and sums[] by row. */
static Py_ssize_t
scan(const Walk *w, const int64_t *order, Py_ssize_t start, double margin)
{
    double dh = w->h[1] - w->h[0], db = w->bias[1] - w->bias[0];
    for (Py_ssize_t p = start; p < w->n; p++) {
        if (w->learned[p])
            continue;
        Py_ssize_t i = order ? (Py_ssize_t)order[p] : p;
        Py_ssize_t a = item(w->indptr, i), b = item(w->indptr, i + 1);
        double sum = 0.0;
        for (Py_ssize_t j = a; j < b; j++) {
            Py_ssize_t k = item(w->indices, j);
            if (k < 0 || k >= w->n_terms)
                return -2;
            sum += w->x[j] * w->diff[k];
        }
        double lead = sum + w->sums[i] * dh + db;
        if (item(w->truth, i) != 1)
            lead = -lead;
        if (lead < margin)
            return p;
    }
    return -1;
}

/* scan() for int32 term numbers, every one checked before the walk (checked()), int64
 * classes and PTR row pointers: the same sums in the same order, without a width test and a
 * range check at each cell of every pass (a walk over SpamAssassin 0.058 → 0.041 s). */
#define SCAN_CHECKED(NAME, PTR)                                                              \
static Py_ssize_t                                                                           \
NAME(const Walk *w, const int64_t *order, Py_ssize_t start, double margin)                  \
{                                                                                           \
    double dh = w->h[1] - w->h[0], db = w->bias[1] - w->bias[0];                             \
    const int32_t *indices = w->indices->buf;                                               \
    const PTR *indptr = w->indptr->buf;                                                     \
    const int64_t *truth = w->truth->buf;                                                   \
    for (Py_ssize_t p = start; p < w->n; p++) {                                             \
        if (w->learned[p])                                                                  \
            continue;                                                                       \
        Py_ssize_t i = order ? (Py_ssize_t)order[p] : p;                                    \
        double sum = 0.0;                                                                   \
        for (Py_ssize_t j = indptr[i], b = indptr[i + 1]; j < b; j++)                       \
            sum += w->x[j] * w->diff[indices[j]];                                           \
        double lead = sum + w->sums[i] * dh + db;                                           \
        if (truth[i] != 1)                                                                  \
            lead = -lead;                                                                   \
        if (lead < margin)                                                                  \
            return p;                                                                       \
    }                                                                                       \
    return -1;                                                                              \
}
SCAN_CHECKED(scan_checked32, int32_t)
SCAN_CHECKED(scan_checked64, int64_t)

typedef Py_ssize_t (*Scan)(const Walk *, const int64_t *, Py_ssize_t, double);

/* The scan for the walk's arrays: a checked one where the term numbers are int32, all in
 * range, and the classes int64; else scan(). */
static Scan
checked(const Walk *w)
{
    if (w->indices->itemsize != 4 || w->truth->itemsize != 8)
        return scan;
    const int32_t *indices = w->indices->buf;
    for (Py_ssize_t j = 0, cells = item(w->indptr, w->n_rows); j < cells; j++)
        if (indices[j] < 0 || indices[j] >= w->n_terms)
            return scan;
    return w->indptr->itemsize == 4 ? scan_checked32 : scan_checked64;
}

/* _Tables.learn for a multinomial (complement 0) or complement model (1), the prior learned
 * from the documents' classes when fit_prior, as numpy computes each step (libm's log). */
static void
learn(Walk *w, Py_ssize_t i, int c, int complement, int fit_prior, double alpha)
{
    Py_ssize_t a = item(w->indptr, i), b = item(w->indptr, i + 1);
    double *G = w->G, *count = w->count, *total = w->total;
    double spread = alpha * (double)w->n_terms;
    w->class_count[c] += 1;
    for (Py_ssize_t j = a; j < b; j++) {
        Py_ssize_t t = item(w->indices, j);
        count[2 * t + c] += w->x[j];
        if (complement)
            total[t] += w->x[j];
    }
    w->mass[c] += w->sums[i];
    for (Py_ssize_t j = a; j < b; j++) {
        Py_ssize_t t = item(w->indices, j);
        if (complement) {
            G[2 * t] = -log((total[t] - count[2 * t]) + alpha);
            G[2 * t + 1] = -log((total[t] - count[2 * t + 1]) + alpha);
        } else {
            G[2 * t + c] = log(count[2 * t + c] + alpha);
        }
        w->diff[t] = G[2 * t + 1] - G[2 * t];
    }
    if (complement) {
        double all = w->mass[0] + w->mass[1];
        w->h[0] = log((all - w->mass[0]) + spread);
        w->h[1] = log((all - w->mass[1]) + spread);
    } else {
        w->h[c] = -log(w->mass[c] + spread);
    }
    if (fit_prior) {
        double documents = w->class_count[0] + w->class_count[1];
        w->bias[0] = log(w->class_count[0]) - log(documents);
        w->bias[1] = log(w->class_count[1]) - log(documents);
    }
}

static void
release(Walk *w, int taken)
{
    for (int k = 0; k < taken; k++)
        PyBuffer_Release(&w->b[k]);
}

/* Take the buffers of the 14 arrays (5 read-only, then 9 writable), checked: 1, or 0 with an
 * exception set. */
static int
take(Walk *w, PyObject **arrays)
{
    for (int k = 0; k < 14; k++) {
        int flags = k < 5 ? PyBUF_C_CONTIGUOUS : PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE;
        if (PyObject_GetBuffer(arrays[k], &w->b[k], flags) < 0) {
            release(w, k);
            return 0;
        }
    }
    Py_buffer *b = w->b;
    w->x = b[0].buf;
    w->indices = &b[1];
    w->indptr = &b[2];
    w->sums = b[3].buf;
    w->truth = &b[4];
    w->learned = b[5].buf;
    w->G = b[6].buf;
    w->diff = b[7].buf;
    w->count = b[8].buf;
    w->total = b[9].buf;
    w->mass = b[10].buf;
    w->h = b[11].buf;
    w->bias = b[12].buf;
    w->class_count = b[13].buf;
    w->n = b[5].len;
    w->n_rows = b[2].itemsize ? b[2].len / b[2].itemsize - 1 : -1;
    w->n_terms = b[7].len / 8;
    int ok = b[0].itemsize == 8 && (b[1].itemsize == 4 || b[1].itemsize == 8)
             && (b[2].itemsize == 4 || b[2].itemsize == 8) && w->n_rows >= 0
             && b[3].itemsize == 8 && b[3].len / 8 == w->n_rows
             && (b[4].itemsize == 4 || b[4].itemsize == 8) && b[4].len / b[4].itemsize == w->n_rows
             && b[5].itemsize == 1 && b[7].itemsize == 8 && b[6].itemsize == 8
             && b[8].itemsize == 8 && b[9].itemsize == 8
             && b[6].len == 2 * b[7].len && b[8].len == b[6].len && b[9].len == b[7].len
             && b[10].len == 16 && b[11].len == 16 && b[12].len == 16 && b[13].len == 16
             && item(w->indptr, w->n_rows) <= b[0].len / 8
             && item(w->indptr, w->n_rows) <= b[1].len / b[1].itemsize;
    if (!ok) {
        release(w, 14);
        PyErr_SetString(PyExc_ValueError, "arrays of the wrong type or shape");
    }
    return ok;
}

#define ARRAYS "OOOOOOOOOOOOOO"
#define ARRAY_ARGS(a) &a[0], &a[1], &a[2], &a[3], &a[4], &a[5], &a[6], &a[7], &a[8], &a[9], \
                      &a[10], &a[11], &a[12], &a[13]

static PyObject *
first_wrong(PyObject *self, PyObject *args)
{
    PyObject *arrays[14];
    Walk w;
    Py_ssize_t start;
    double margin;
    if (!PyArg_ParseTuple(args, ARRAYS "nd", ARRAY_ARGS(arrays), &start, &margin)
            || !take(&w, arrays))
        return NULL;
    if (w.n != w.n_rows) {  /* without an order, place p is row p */
        release(&w, 14);
        return PyErr_Format(PyExc_ValueError, "one learned flag a row");
    }
    Py_ssize_t found = scan(&w, NULL, start < 0 ? 0 : start, margin);
    release(&w, 14);
    if (found == -2)
        return PyErr_Format(PyExc_ValueError, "a term number out of range");
    return PyLong_FromSsize_t(found);
}

static PyObject *
walk(PyObject *self, PyObject *args)
{
    PyObject *arrays[14], *order_array;
    Walk w;
    Py_buffer order;
    int complement, fit_prior, max_passes;
    double alpha, margin;
    if (!PyArg_ParseTuple(args, ARRAYS "ppddiO", ARRAY_ARGS(arrays), &complement, &fit_prior,
                          &alpha, &margin, &max_passes, &order_array) || !take(&w, arrays))
        return NULL;
    if (PyObject_GetBuffer(order_array, &order, PyBUF_C_CONTIGUOUS) < 0) {
        release(&w, 14);
        return NULL;
    }
    const int64_t *rows = order.buf;
    int ok = order.itemsize == 8 && order.len / 8 == w.n;
    for (Py_ssize_t p = 0; ok && p < w.n; p++)
        ok = rows[p] >= 0 && rows[p] < w.n_rows;
    if (!ok) {
        PyBuffer_Release(&order);
        release(&w, 14);
        return PyErr_Format(PyExc_ValueError,
                            "order must be int64 row numbers, one a learned flag");
    }
    int passes = 0, broken = 0;
    Py_ssize_t *per_pass = PyMem_Calloc(max_passes > 0 ? max_passes : 1, sizeof(Py_ssize_t));
    if (!per_pass) {
        PyBuffer_Release(&order);
        release(&w, 14);
        return PyErr_NoMemory();
    }
    Py_BEGIN_ALLOW_THREADS
    Scan next_wrong = checked(&w);
    while (passes < max_passes) {
        Py_ssize_t learned = 0, p = -1;
        while ((p = next_wrong(&w, rows, p + 1, margin)) >= 0) {
            learn(&w, rows[p], (int)item(w.truth, rows[p]), complement, fit_prior, alpha);
            w.learned[p] = 1;
            learned++;
        }
        broken = p == -2;
        per_pass[passes++] = learned;
        if (!learned || broken)
            break;
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&order);
    release(&w, 14);
    if (broken) {
        PyMem_Free(per_pass);
        return PyErr_Format(PyExc_ValueError, "a term number out of range");
    }
    PyObject *result = PyList_New(passes);
    for (int k = 0; result && k < passes; k++) {
        PyObject *number = PyLong_FromSsize_t(per_pass[k]);
        if (!number) {
            Py_CLEAR(result);
            break;
        }
        PyList_SET_ITEM(result, k, number);
    }
    PyMem_Free(per_pass);
    return result;
}

/* rows(data, indices, indptr, rows) -> (data, indices, indptr): the rows of a CSR matrix
 * (float64 data, int32 or int64 indices and indptr) numbered by rows (int64), in that order, as
 * bytearrays: float64, the indices' own width, int64. */
static PyObject *
rows(PyObject *self, PyObject *args)
{
    PyObject *objects[4], *data = NULL, *indices = NULL, *indptr = NULL, *result = NULL;
    Py_buffer b[4];
    int got = 0;
    if (!PyArg_ParseTuple(args, "OOOO:rows", &objects[0], &objects[1], &objects[2], &objects[3]))
        return NULL;
    for (; got < 4; got++)
        if (PyObject_GetBuffer(objects[got], &b[got], PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0)
            goto done;
    if (b[0].itemsize != 8 || (b[1].itemsize != 4 && b[1].itemsize != 8) ||
            (b[2].itemsize != 4 && b[2].itemsize != 8) || b[3].itemsize != 8 ||
            b[0].len / 8 != b[1].len / b[1].itemsize || b[2].len < b[2].itemsize) {
        PyErr_SetString(PyExc_ValueError, "rows: float64 data, int32 or int64 indices and "
                        "indptr of as many entries, int64 rows");
        goto done;
    }
    Py_ssize_t n_rows = b[2].len / b[2].itemsize - 1, n_entries = b[0].len / 8;
    Py_ssize_t n_taken = b[3].len / 8, size = 0, width = b[1].itemsize;
    const int64_t *taken = b[3].buf;
    for (Py_ssize_t i = 0; i < n_taken; i++) {
        if (taken[i] < 0 || taken[i] >= n_rows) {
            PyErr_SetString(PyExc_IndexError, "rows: a row number out of range");
            goto done;
        }
        Py_ssize_t start = item(&b[2], taken[i]), stop = item(&b[2], taken[i] + 1);
        if (start < 0 || stop < start || stop > n_entries) {
            PyErr_SetString(PyExc_ValueError, "rows: indptr must ascend within the data");
            goto done;
        }
        size += stop - start;
    }
    data = PyByteArray_FromStringAndSize(NULL, size * 8);
    indices = PyByteArray_FromStringAndSize(NULL, size * width);
    indptr = PyByteArray_FromStringAndSize(NULL, (n_taken + 1) * 8);
    if (data == NULL || indices == NULL || indptr == NULL)
        goto done;
    char *to_data = PyByteArray_AS_STRING(data), *to_indices = PyByteArray_AS_STRING(indices);
    int64_t *to_indptr = (int64_t *)PyByteArray_AS_STRING(indptr);
    Py_ssize_t at = 0;
    to_indptr[0] = 0;
    for (Py_ssize_t i = 0; i < n_taken; i++) {
        Py_ssize_t start = item(&b[2], taken[i]), n = item(&b[2], taken[i] + 1) - start;
        memcpy(to_data + at * 8, (const char *)b[0].buf + start * 8, n * 8);
        memcpy(to_indices + at * width, (const char *)b[1].buf + start * width, n * width);
        at += n;
        to_indptr[i + 1] = at;
    }
    result = PyTuple_Pack(3, data, indices, indptr);
done:
    Py_XDECREF(data);
    Py_XDECREF(indices);
    Py_XDECREF(indptr);
    for (int i = 0; i < got; i++)
        PyBuffer_Release(&b[i]);
    return result;
}

static PyMethodDef methods[] = {
    {"first_wrong", first_wrong, METH_VARARGS,
     "first_wrong(data, indices, indptr, sums, truth, learned, G, diff, count, total, mass, h, "
     "bias, class_count, start, margin) -> int: the first row i >= start of the CSR matrix "
     "(float64 data; int32 or int64 indices and indptr) not learned (bool) whose lead, "
     "x_i·diff + sums_i·(h_1 − h_0) + bias_1 − bias_0 for truth 1 and its negation otherwise, "
     "is under margin; -1 if none. The tables are textnb.nb.on_error._Tables' arrays."},
    {"walk", walk, METH_VARARGS,
     "walk(data, indices, indptr, sums, truth, learned, G, diff, count, total, mass, h, bias, "
     "class_count, complement, fit_prior, alpha, margin, max_passes, order) -> per_pass: the "
     "passes of a two-class walk from the tables as they are, visiting row order[p] at place p "
     "(of as many places as learned flags), learning each first_wrong one into them "
     "(_Tables.learn of a multinomial or complement model) and marking its place learned."},
    {"rows", rows, METH_VARARGS,
     "rows(data, indices, indptr, rows) -> (data, indices, indptr): the rows (int64) of a CSR "
     "matrix, in that order, as bytearrays (float64, the indices' width, int64)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_onerror", NULL, -1, methods,
                                    NULL, NULL, NULL, NULL};

PyMODINIT_FUNC
PyInit__onerror(void)
{
    return PyModule_Create(&module);
}
