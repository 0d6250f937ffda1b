/* The loops over a CSR matrix's entries that textnb.nb.discrete and textnb.text.vocabulary run for every
 * fit and score, in C: documents' joint log-likelihoods (each row times the weights of its
 * terms, summed per class), the classes' counts, rows' sums and division, the terms a batch
 * uses, and columns renamed or dropped.
 *
 * The Python code is the definition, and the fallback where this module is not built: there
 * numpy.bincount adds a row's products x_j·w_c[k_j] one by one in the row's order, from 0.0,
 * and so does this loop, so the sums are the same to the bit (no fused multiply-add: the build
 * passes -ffp-contract=off). tests/test_models.py checks that both give the same scores.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
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

/* The buffers of a CSR matrix's rows: float64 values (writable if asked), int32 or int64
 * indptr, checked to ascend within the values. 1, or 0 with an exception set. */
static int
rows_of(PyObject *values, PyObject *indptr, Py_buffer *v, Py_buffer *p, int writable)
{
    if (PyObject_GetBuffer(values, v, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT
                           | (writable ? PyBUF_WRITABLE : 0)) < 0)
        return 0;
    if (PyObject_GetBuffer(indptr, p, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) {
        PyBuffer_Release(v);
        return 0;
    }
    char vt = v->format[strlen(v->format) - 1], pt = p->format[strlen(p->format) - 1];
    int ok = v->itemsize == 8 && vt == 'd'
             && ((p->itemsize == 8 && strchr("lq", pt)) || (p->itemsize == 4 && strchr("il", pt)))
             && p->len / p->itemsize >= 1;
    Py_ssize_t n_rows = ok ? p->len / p->itemsize - 1 : 0, n_values = v->len / 8;
    for (Py_ssize_t r = 0; ok && r <= n_rows; r++) {
        Py_ssize_t at = item(p, r);
        ok = at >= 0 && at <= n_values && (r == 0 || at >= item(p, r - 1));
    }
    if (!ok) {
        PyErr_SetString(PyExc_ValueError, "values float64 and indptr int32 or int64, ascending "
                        "within the values");
        PyBuffer_Release(v);
        PyBuffer_Release(p);
    }
    return ok;
}

/* row_sums(values, indptr) -> float64 bytes: each row's values added in order from 0.0, as
 * numpy.bincount over the rows adds them. */
static PyObject *
row_sums(PyObject *self, PyObject *args)
{
    PyObject *values, *indptr, *result;
    Py_buffer v, p;
    if (!PyArg_ParseTuple(args, "OO:row_sums", &values, &indptr) || !rows_of(values, indptr, &v, &p, 0))
        return NULL;
    Py_ssize_t n_rows = p.len / p.itemsize - 1;
    result = PyBytes_FromStringAndSize(NULL, n_rows * (Py_ssize_t)sizeof(double));
    if (result != NULL) {
        double *out = (double *)PyBytes_AS_STRING(result);
        const double *x = v.buf;
        for (Py_ssize_t r = 0; r < n_rows; r++) {
            double sum = 0.0;
            for (Py_ssize_t j = item(&p, r), stop = item(&p, r + 1); j < stop; j++)
                sum += x[j];
            out[r] = sum;
        }
    }
    PyBuffer_Release(&v);
    PyBuffer_Release(&p);
    return result;
}

/* divide_rows(values, indptr, by): each of row r's values divided by by[r], in place. */
static PyObject *
divide_rows(PyObject *self, PyObject *args)
{
    PyObject *values, *indptr, *by;
    Py_buffer v, p, d;
    if (!PyArg_ParseTuple(args, "OOO:divide_rows", &values, &indptr, &by)
            || !rows_of(values, indptr, &v, &p, 1))
        return NULL;
    if (PyObject_GetBuffer(by, &d, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) {
        PyBuffer_Release(&v);
        PyBuffer_Release(&p);
        return NULL;
    }
    Py_ssize_t n_rows = p.len / p.itemsize - 1;
    PyObject *result = NULL;
    if (d.itemsize != 8 || d.format[strlen(d.format) - 1] != 'd' || d.len / 8 != n_rows)
        PyErr_SetString(PyExc_ValueError, "by must be float64, one a row");
    else {
        double *x = v.buf;
        const double *q = d.buf;
        for (Py_ssize_t r = 0; r < n_rows; r++)
            for (Py_ssize_t j = item(&p, r), stop = item(&p, r + 1); j < stop; j++)
                x[j] /= q[r];
        result = Py_NewRef(Py_None);
    }
    PyBuffer_Release(&v);
    PyBuffer_Release(&p);
    PyBuffer_Release(&d);
    return result;
}

/* class_sums(values, columns, indptr, row_class, weight, c, out): out[columns[j]] += values[j]
 * * weight[r] over the entries j of each row r of class c (row_class[r] == c), in order, as
 * numpy.bincount of those entries' products adds them. columns int32 or int64, row_class
 * int64, weight and out float64 (out: one a column). */
static PyObject *
class_sums(PyObject *self, PyObject *args)
{
    PyObject *values, *columns, *indptr, *row_class, *weight, *out;
    Py_ssize_t c;
    Py_buffer v, p, k, rc, w, o;
    if (!PyArg_ParseTuple(args, "OOOOOnO:class_sums", &values, &columns, &indptr, &row_class,
                          &weight, &c, &out) || !rows_of(values, indptr, &v, &p, 0))
        return NULL;
    PyObject *result = NULL;
    int got = 0;
    Py_buffer *more[4] = {&k, &rc, &w, &o};
    PyObject *objects[4] = {columns, row_class, weight, out};
    for (; got < 4; got++)
        if (PyObject_GetBuffer(objects[got], more[got], PyBUF_C_CONTIGUOUS | PyBUF_FORMAT
                               | (got == 3 ? PyBUF_WRITABLE : 0)) < 0)
            goto done;
    Py_ssize_t n_rows = p.len / p.itemsize - 1, n_values = v.len / 8, n_out = o.len / 8;
    int ok = (k.itemsize == 4 || k.itemsize == 8) && k.len / k.itemsize == n_values
             && rc.itemsize == 8 && rc.len / 8 == n_rows && w.itemsize == 8
             && w.format[strlen(w.format) - 1] == 'd' && w.len / 8 == n_rows
             && o.itemsize == 8 && o.format[strlen(o.format) - 1] == 'd';
    for (Py_ssize_t j = 0; ok && j < n_values; j++)
        ok = item(&k, j) >= 0 && item(&k, j) < n_out;
    if (!ok) {
        PyErr_SetString(PyExc_ValueError, "class_sums: columns one a value and within out, "
                        "row_class int64 and weight float64 one a row");
        goto done;
    }
    const double *x = v.buf, *weights = w.buf;
    const int64_t *classes = rc.buf;
    double *sums = o.buf;
    for (Py_ssize_t r = 0; r < n_rows; r++) {
        if (classes[r] != c)
            continue;
        for (Py_ssize_t j = item(&p, r), stop = item(&p, r + 1); j < stop; j++)
            sums[item(&k, j)] += x[j] * weights[r];
    }
    result = Py_NewRef(Py_None);
done:
    for (int i = 0; i < got; i++)
        PyBuffer_Release(more[i]);
    PyBuffer_Release(&v);
    PyBuffer_Release(&p);
    return result;
}

/* used_terms(indices, n_terms) -> (used, inverse): the distinct term numbers of indices (int32
 * or int64, each in [0, n_terms)), ascending, and each entry's place among them, as int64
 * bytes: numpy.unique(indices, return_inverse=True), by marking the terms. */
static PyObject *
used_terms(PyObject *self, PyObject *args)
{
    PyObject *indices, *used = NULL, *inverse = NULL, *result = NULL;
    Py_ssize_t n_terms;
    Py_buffer k;
    if (!PyArg_ParseTuple(args, "On:used_terms", &indices, &n_terms)
            || PyObject_GetBuffer(indices, &k, PyBUF_C_CONTIGUOUS) < 0)
        return NULL;
    Py_ssize_t n = k.itemsize ? k.len / k.itemsize : 0, found = 0;
    int64_t *place = NULL;
    if ((k.itemsize != 4 && k.itemsize != 8) || n_terms < 0) {
        PyErr_SetString(PyExc_ValueError, "used_terms: int32 or int64 indices, n_terms >= 0");
        goto done;
    }
    for (Py_ssize_t j = 0; j < n; j++)
        if (item(&k, j) < 0 || item(&k, j) >= n_terms) {
            PyErr_SetString(PyExc_ValueError, "used_terms: an index outside [0, n_terms)");
            goto done;
        }
    place = PyMem_Malloc((n_terms + 1) * sizeof(int64_t));
    if (place == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t t = 0; t < n_terms; t++)
        place[t] = -1;
    for (Py_ssize_t j = 0; j < n; j++)
        place[item(&k, j)] = 0;
    for (Py_ssize_t t = 0; t < n_terms; t++)
        if (place[t] >= 0)
            found++;
    used = PyBytes_FromStringAndSize(NULL, found * (Py_ssize_t)sizeof(int64_t));
    inverse = PyBytes_FromStringAndSize(NULL, n * (Py_ssize_t)sizeof(int64_t));
    if (used == NULL || inverse == NULL)
        goto done;
    int64_t *u = (int64_t *)PyBytes_AS_STRING(used), *v = (int64_t *)PyBytes_AS_STRING(inverse);
    for (Py_ssize_t t = 0, m = 0; t < n_terms; t++)
        if (place[t] >= 0) {
            u[m] = t;
            place[t] = m++;
        }
    for (Py_ssize_t j = 0; j < n; j++)
        v[j] = place[item(&k, j)];
    result = PyTuple_Pack(2, used, inverse);
done:
    PyMem_Free(place);
    Py_XDECREF(used);
    Py_XDECREF(inverse);
    PyBuffer_Release(&k);
    return result;
}

/* relabel(data, indices, indptr, column) -> (indices, data, indptr): a CSR matrix's entry j
 * given column column[indices[j]] (int64), those of a negative one dropped: int32 indices, and
 * float64 data and int64 indptr bytes, or None for each where no entry was dropped. */
static PyObject *
relabel(PyObject *self, PyObject *args)
{
    PyObject *data, *indices, *indptr, *column, *out_i = NULL, *out_d = NULL, *out_p = NULL;
    PyObject *result = NULL;
    Py_buffer v, p, k, c;
    if (!PyArg_ParseTuple(args, "OOOO:relabel", &data, &indices, &indptr, &column)
            || !rows_of(data, indptr, &v, &p, 0))
        return NULL;
    int got = 0;
    if (PyObject_GetBuffer(indices, &k, PyBUF_C_CONTIGUOUS) < 0)
        goto done;
    got = 1;
    if (PyObject_GetBuffer(column, &c, PyBUF_C_CONTIGUOUS) < 0)
        goto done;
    got = 2;
    Py_ssize_t n = v.len / 8, n_rows = p.len / p.itemsize - 1, n_columns = c.len / 8, kept = 0;
    if ((k.itemsize != 4 && k.itemsize != 8) || k.len / k.itemsize != n || c.itemsize != 8) {
        PyErr_SetString(PyExc_ValueError, "relabel: indices one a value, int64 columns");
        goto done;
    }
    const int64_t *to = c.buf;
    for (Py_ssize_t j = 0; j < n; j++) {
        Py_ssize_t t = item(&k, j);
        if (t < 0 || t >= n_columns || to[t] > INT32_MAX) {
            PyErr_SetString(PyExc_ValueError, "relabel: an index outside the columns");
            goto done;
        }
        kept += to[t] >= 0;
    }
    out_i = PyBytes_FromStringAndSize(NULL, kept * (Py_ssize_t)sizeof(int32_t));
    if (out_i == NULL)
        goto done;
    int32_t *ni = (int32_t *)PyBytes_AS_STRING(out_i);
    if (kept == n) {
        for (Py_ssize_t j = 0; j < n; j++)
            ni[j] = (int32_t)to[item(&k, j)];
        result = PyTuple_Pack(3, out_i, Py_None, Py_None);
        goto done;
    }
    out_d = PyBytes_FromStringAndSize(NULL, kept * (Py_ssize_t)sizeof(double));
    out_p = PyBytes_FromStringAndSize(NULL, (n_rows + 1) * (Py_ssize_t)sizeof(int64_t));
    if (out_d == NULL || out_p == NULL)
        goto done;
    double *nd = (double *)PyBytes_AS_STRING(out_d);
    int64_t *np_ = (int64_t *)PyBytes_AS_STRING(out_p);
    const double *x = v.buf;
    Py_ssize_t m = 0;
    np_[0] = 0;
    for (Py_ssize_t r = 0; r < n_rows; r++) {
        for (Py_ssize_t j = item(&p, r), stop = item(&p, r + 1); j < stop; j++) {
            int64_t t = to[item(&k, j)];
            if (t >= 0) {
                ni[m] = (int32_t)t;
                nd[m++] = x[j];
            }
        }
        np_[r + 1] = m;
    }
    result = PyTuple_Pack(3, out_i, out_d, out_p);
done:
    if (got >= 2)
        PyBuffer_Release(&c);
    if (got >= 1)
        PyBuffer_Release(&k);
    PyBuffer_Release(&v);
    PyBuffer_Release(&p);
    Py_XDECREF(out_i);
    Py_XDECREF(out_d);
    Py_XDECREF(out_p);
    return result;
}

/* A count of a model file's count_values: unsigned integers of any width, or float64. */
static inline double
count_at(const Py_buffer *b, Py_ssize_t i)
{
    if (b->format[strlen(b->format) - 1] == 'd')
        return ((const double *)b->buf)[i];
    switch (b->itemsize) {
    case 1: return (double)((const uint8_t *)b->buf)[i];
    case 2: return (double)((const uint16_t *)b->buf)[i];
    case 4: return (double)((const uint32_t *)b->buf)[i];
    default: return (double)((const uint64_t *)b->buf)[i];
    }
}

static inline uint64_t
unsigned_at(const Py_buffer *b, Py_ssize_t i)
{
    switch (b->itemsize) {
    case 1: return ((const uint8_t *)b->buf)[i];
    case 2: return ((const uint16_t *)b->buf)[i];
    case 4: return ((const uint32_t *)b->buf)[i];
    default: return ((const uint64_t *)b->buf)[i];
    }
}

/* Fill out[0:n] with the floats of the sequence seq (n of them); 0 and an exception if not. */
static int
floats(PyObject *seq, double *out, Py_ssize_t n)
{
    PyObject *fast = PySequence_Fast(seq, "a sequence of floats");
    if (fast == NULL)
        return 0;
    int ok = PySequence_Fast_GET_SIZE(fast) == n;
    for (Py_ssize_t i = 0; ok && i < n; i++) {
        out[i] = PyFloat_AsDouble(PySequence_Fast_GET_ITEM(fast, i));
        ok = !(out[i] == -1.0 && PyErr_Occurred());
    }
    if (!ok && !PyErr_Occurred())
        PyErr_SetString(PyExc_ValueError, "sequences of different lengths");
    Py_DECREF(fast);
    return ok;
}

/* term_sums(model, alpha, a, b, absent, class_count, indptr, classes, counts, columns,
 * values) -> list: the mail filter's sums over a message's terms of value × the term's weight
 * per class (textnb.store.scorer.Scorer._rows, its definition, and log_proba's loop, in their
 * order: the same floats). */
static PyObject *
term_sums(PyObject *self, PyObject *args)
{
    int model;
    double alpha;
    PyObject *a_o, *b_o, *absent_o, *count_o, *indptr_o, *classes_o, *counts_o, *columns_o,
             *values_o, *result = NULL, *columns = NULL;
    Py_buffer p, k, v;
    int got = 0;
    double *memory = NULL;
    if (!PyArg_ParseTuple(args, "idOOOOOOOOO:term_sums", &model, &alpha, &a_o, &b_o, &absent_o,
                          &count_o, &indptr_o, &classes_o, &counts_o, &columns_o, &values_o))
        return NULL;
    Py_ssize_t n = PyObject_Length(a_o);
    if (n < 0)
        return NULL;
    Py_buffer *buffers[3] = {&p, &k, &v};
    PyObject *objects[3] = {indptr_o, classes_o, counts_o};
    for (; got < 3; got++)
        if (PyObject_GetBuffer(objects[got], buffers[got], PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0)
            goto done;
    columns = PySequence_Fast(columns_o, "columns must be a sequence");
    if (columns == NULL)
        goto done;
    Py_ssize_t n_terms = PySequence_Fast_GET_SIZE(columns);
    Py_ssize_t n_rows = p.len / p.itemsize - 1, n_entries = k.len / k.itemsize;
    memory = PyMem_Malloc(sizeof(double) * (6 * (size_t)n + (size_t)n_terms + 1));
    if (memory == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    double *a = memory, *b = a + n, *absent = b + n, *class_count = absent + n, *sums = class_count + n,
           *row = sums + n, *values = row + n;
    if (!floats(a_o, a, n) || !floats(b_o, b, n) || !floats(absent_o, absent, n) ||
            !floats(count_o, class_count, n) || !floats(values_o, values, n_terms))
        goto done;
    for (Py_ssize_t c = 0; c < n; c++)
        sums[c] = 0.0;
    for (Py_ssize_t t = 0; t < n_terms; t++) {
        Py_ssize_t term = PyLong_AsSsize_t(PySequence_Fast_GET_ITEM(columns, t));
        if (term == -1 && PyErr_Occurred())
            goto done;
        if (term < 0 || term >= n_rows) {
            PyErr_SetString(PyExc_ValueError, "a column beyond the terms");
            goto done;
        }
        uint64_t lo = unsigned_at(&p, term), hi = unsigned_at(&p, term + 1);
        if (lo > hi || hi > (uint64_t)n_entries || (Py_ssize_t)(v.len / v.itemsize) < n_entries) {
            PyErr_SetString(PyExc_ValueError, "counts that do not fit their rows");
            goto done;
        }
        for (uint64_t j = lo; j < hi; j++)
            if (unsigned_at(&k, (Py_ssize_t)j) >= (uint64_t)n) {
                PyErr_SetString(PyExc_ValueError, "a class beyond the classes");
                goto done;
            }
        if (model == 0) {  /* complement */
            double total = 0.0;
            for (uint64_t j = lo; j < hi; j++)
                total += count_at(&v, (Py_ssize_t)j);
            double zero = log(total + alpha);
            for (Py_ssize_t c = 0; c < n; c++)
                row[c] = (zero - a[c]) / b[c];
            for (uint64_t j = lo; j < hi; j++) {
                Py_ssize_t c = (Py_ssize_t)unsigned_at(&k, (Py_ssize_t)j);
                double x = total - count_at(&v, (Py_ssize_t)j) + alpha;
                row[c] = (log(x > alpha ? x : alpha) - a[c]) / b[c];
            }
        } else {
            for (Py_ssize_t c = 0; c < n; c++)
                row[c] = absent[c];
            for (uint64_t j = lo; j < hi; j++) {
                Py_ssize_t c = (Py_ssize_t)unsigned_at(&k, (Py_ssize_t)j);
                double count = count_at(&v, (Py_ssize_t)j);
                if (model == 1)  /* multinomial */
                    row[c] = log(count + alpha) - a[c];
                else {  /* bernoulli */
                    double x = class_count[c] - count;
                    row[c] = (log(count + alpha) - a[c]) - (log((x > 0.0 ? x : 0.0) + alpha) - a[c]);
                }
            }
        }
        for (Py_ssize_t c = 0; c < n; c++)
            sums[c] += values[t] * row[c];
    }
    result = PyList_New(n);
    for (Py_ssize_t c = 0; result != NULL && c < n; c++) {
        PyObject *sum = PyFloat_FromDouble(sums[c]);
        if (sum == NULL) {
            Py_CLEAR(result);
            break;
        }
        PyList_SET_ITEM(result, c, sum);
    }
done:
    for (int i = 0; i < got; i++)
        PyBuffer_Release(buffers[i]);
    Py_XDECREF(columns);
    PyMem_Free(memory);
    return result;
}

static PyMethodDef methods[] = {
    {"jll", jll, METH_VARARGS,
     "jll(values, columns, indptr, weights, out): out[r, c] = the sum over row r's entries j "
     "(indptr[r]:indptr[r + 1]) of values[j] * weights[c, columns[j]], added in order from "
     "0.0. values float64, columns int64, indptr int32 or int64, weights float64 (classes, "
     "terms) and out float64 (rows, classes), C order."},
    {"row_sums", row_sums, METH_VARARGS,
     "row_sums(values, indptr) -> bytes: float64, each CSR row's values added in order from "
     "0.0."},
    {"divide_rows", divide_rows, METH_VARARGS,
     "divide_rows(values, indptr, by): each CSR row r's values divided by by[r], in place."},
    {"class_sums", class_sums, METH_VARARGS,
     "class_sums(values, columns, indptr, row_class, weight, c, out): out[columns[j]] += "
     "values[j] * weight[r] over the entries j of the rows r of class c, in order."},
    {"used_terms", used_terms, METH_VARARGS,
     "used_terms(indices, n_terms) -> (used, inverse): the distinct indices ascending and each "
     "entry's place among them, int64 bytes."},
    {"relabel", relabel, METH_VARARGS,
     "relabel(data, indices, indptr, column) -> (indices, data, indptr): entry j's column "
     "column[indices[j]], those of a negative one dropped; data and indptr None where none "
     "was."},
    {"term_sums", term_sums, METH_VARARGS,
     "term_sums(model, alpha, a, b, absent, class_count, indptr, classes, counts, columns, "
     "values) -> list: per class, the sum over a message's terms (columns, ascending) of "
     "values[t] times the term's weight from its counts (model 0 complement, 1 multinomial, "
     "2 Bernoulli), as the mail filter's scorer computes it in Python."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_scores", NULL, -1, methods,
                                    NULL, NULL, NULL, NULL};

PyMODINIT_FUNC
PyInit__scores(void)
{
    return PyModule_Create(&module);
}
