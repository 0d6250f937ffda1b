/* The two passes of textnb.store.container's plain reader (the mail filter's) over a whole model
 * file that Python makes slow: that its terms are UTF-8 lines in strictly ascending order,
 * and where each ends; and that its counts' rows are in order (count_indptr non-decreasing
 * from 0 to the number of counts, each row's class numbers ascending and below the number of
 * classes). And the mail filter's lookup of a message's tokens among the terms (columns):
 * a bisection a token, which in Python cost a slice and a comparison a step.
 *
 * The Python code in textnb/modelfile.py is the definition, and the fallback where this
 * module is not built; the numpy reader checks the same predicates. tests/test_modelfile.py
 * and tests/test_hostile_models.py check that the three agree. For SpamAssassin's model
 * (72,000 terms, 81,000 counts) the two passes take 1-2 ms here, 20 ms in Python (a busy
 * 2-core machine).
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

/* The length of the UTF-8 sequence at p (before end) as Python's strict decoder takes it (no
 * overlong forms, surrogates or code points above U+10FFFF), or 0 if it is not one. */
static inline Py_ssize_t
utf8_length(const unsigned char *p, const unsigned char *end)
{
    unsigned char c = p[0];
    if (c < 0x80)
        return 1;
    Py_ssize_t n = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3
                 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
    if (n == 0 || end - p < n)
        return 0;
    unsigned char low = 0x80, high = 0xBF;  /* the second byte's range */
    if (c == 0xE0) low = 0xA0;
    else if (c == 0xED) high = 0x9F;
    else if (c == 0xF0) low = 0x90;
    else if (c == 0xF4) high = 0x8F;
    if (p[1] < low || p[1] > high)
        return 0;
    for (Py_ssize_t i = 2; i < n; i++)
        if (p[i] < 0x80 || p[i] > 0xBF)
            return 0;
    return n;
}

/* sorted_lines(data, lines) -> bytes or None: where each of the ``lines`` lines of data ends
 * (split at b"\n"; b"" has none), as native uint64s, each the offset after the line's end plus
 * one (the last one len(data) + 1), if data is UTF-8 of that many lines, each above the one
 * before in byte order (a prefix below what extends it: the order of their code points);
 * else None. */
static PyObject *
sorted_lines(PyObject *self, PyObject *args)
{
    Py_buffer b;
    Py_ssize_t lines;
    if (!PyArg_ParseTuple(args, "y*n:sorted_lines", &b, &lines))
        return NULL;
    if (lines < 0 || lines > b.len + 1 || (lines == 0) != (b.len == 0)) {
        PyBuffer_Release(&b);
        Py_RETURN_NONE;
    }
    if (lines == 0) {  /* no terms */
        PyBuffer_Release(&b);
        return PyBytes_FromStringAndSize(NULL, 0);
    }
    PyObject *result = PyBytes_FromStringAndSize(NULL, lines * (Py_ssize_t)sizeof(uint64_t));
    if (result == NULL) {
        PyBuffer_Release(&b);
        return NULL;
    }
    uint64_t *ends = (uint64_t *)PyBytes_AS_STRING(result);
    const unsigned char *data = b.buf, *end = data + b.len, *p = data, *start = data;
    const unsigned char *previous = NULL;
    Py_ssize_t previous_length = 0, line = 0;
    int ok = 1;
    for (;;) {
        /* Eight bytes at a time while they are ASCII: up to the first line break among them
         * (the lowest byte flagged: a borrow reaches only the bytes above a break). */
        while (end - p >= 8) {
            uint64_t word, breaks;
            memcpy(&word, p, 8);
            if (word & 0x8080808080808080ull)
                break;
            breaks = word ^ 0x0A0A0A0A0A0A0A0Aull;
            breaks = (breaks - 0x0101010101010101ull) & ~breaks & 0x8080808080808080ull;
            if (breaks) {
#if PY_LITTLE_ENDIAN
                p += __builtin_ctzll(breaks) >> 3;
#endif
                break;
            }
            p += 8;
        }
        if (p < end && *p != '\n') {
            Py_ssize_t n = *p < 0x80 ? 1 : utf8_length(p, end);
            if (n == 0) {
                ok = 0;
                break;
            }
            p += n;
            continue;
        }
        /* A line ends at p: after the one before it, and one of those said. */
        Py_ssize_t length = p - start;
        if (previous != NULL) {
            Py_ssize_t common = length < previous_length ? length : previous_length;
            int order = memcmp(previous, start, (size_t)common);
            if (order > 0 || (order == 0 && previous_length >= length)) {
                ok = 0;
                break;
            }
        }
        if (line == lines) {
            ok = 0;
            break;
        }
        ends[line++] = (uint64_t)(p - data) + 1;
        if (p == end)
            break;
        previous = start;
        previous_length = length;
        start = ++p;
    }
    PyBuffer_Release(&b);
    if (!ok || line != lines) {
        Py_DECREF(result);
        Py_RETURN_NONE;
    }
    return result;
}

static inline uint64_t
unsigned_item(const Py_buffer *b, Py_ssize_t i)
{
    switch (b->itemsize) {
    case 1: return ((const uint8_t *)b->buf)[i];
    case 2: return ((const uint16_t *)b->buf)[i];
    case 4: return ((const uint32_t *)b->buf)[i];
    default: return ((const uint64_t *)b->buf)[i];
    }
}

static int
unsigned_array(PyObject *object, Py_buffer *b, const char *name)
{
    if (PyObject_GetBuffer(object, b, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0)
        return 0;
    char type = b->format[strlen(b->format) - 1];
    if (b->ndim > 1 || !strchr("BHILQ", type) ||
            !(b->itemsize == 1 || b->itemsize == 2 || b->itemsize == 4 || b->itemsize == 8)) {
        PyErr_Format(PyExc_ValueError, "%s must be an array of unsigned integers", name);
        PyBuffer_Release(b);
        return 0;
    }
    return 1;
}

/* rows(indptr, classes, n_classes) -> None, "indptr" or "rows": what is wrong with a CSR
 * matrix's structure by term (indptr of the rows, classes the column of each entry), first
 * found: indptr not running from 0 to len(classes) without decreasing, or a row's classes
 * not ascending or not below n_classes. Both arrays of unsigned integers. */
static PyObject *
rows(PyObject *self, PyObject *args)
{
    PyObject *indptr_object, *classes_object;
    Py_ssize_t n_classes;
    Py_buffer p, c;
    if (!PyArg_ParseTuple(args, "OOn:rows", &indptr_object, &classes_object, &n_classes))
        return NULL;
    if (!unsigned_array(indptr_object, &p, "indptr"))
        return NULL;
    if (!unsigned_array(classes_object, &c, "classes")) {
        PyBuffer_Release(&p);
        return NULL;
    }
    Py_ssize_t n_rows = p.len / p.itemsize - 1, n_entries = c.len / c.itemsize;
    const char *problem = NULL;
    if (n_rows < 0 || unsigned_item(&p, 0) != 0 ||
            unsigned_item(&p, n_rows) != (uint64_t)n_entries)
        problem = "indptr";
    for (Py_ssize_t r = 0; problem == NULL && r < n_rows; r++)
        if (unsigned_item(&p, r) > unsigned_item(&p, r + 1))
            problem = "indptr";
    for (Py_ssize_t r = 0; problem == NULL && r < n_rows; r++) {
        uint64_t lo = unsigned_item(&p, r), hi = unsigned_item(&p, r + 1);
        for (uint64_t j = lo; j < hi; j++) {
            uint64_t k = unsigned_item(&c, (Py_ssize_t)j);
            if (k >= (uint64_t)n_classes ||
                    (j > lo && k <= unsigned_item(&c, (Py_ssize_t)j - 1))) {
                problem = "rows";
                break;
            }
        }
    }
    PyBuffer_Release(&p);
    PyBuffer_Release(&c);
    if (problem == NULL)
        Py_RETURN_NONE;
    return PyUnicode_FromString(problem);
}

/* The term's bytes k of a model file's sorted terms (blob, each line ended at ends[k] - 1):
 * [*start, *stop); 0 where ends does not fit the blob. */
static inline int
term_at(const Py_buffer *blob, const Py_buffer *ends, Py_ssize_t k, uint64_t *start,
        uint64_t *stop)
{
    uint64_t end = unsigned_item(ends, k);
    *start = k ? unsigned_item(ends, k - 1) : 0;
    if (end == 0 || end - 1 > (uint64_t)blob->len || *start > end - 1)
        return 0;
    *stop = end - 1;
    return 1;
}

/* columns(blob, ends, keys) -> list: the index of each key (str, as UTF-8 with surrogates
 * passed) among a model file's sorted terms, or -1: textnb.store.plain.term_index's bisection,
 * a key at a time. */
static PyObject *
columns(PyObject *self, PyObject *args)
{
    PyObject *ends_object, *keys, *result = NULL;
    Py_buffer blob, ends;
    if (!PyArg_ParseTuple(args, "y*OO:columns", &blob, &ends_object, &keys))
        return NULL;
    if (!unsigned_array(ends_object, &ends, "ends")) {
        PyBuffer_Release(&blob);
        return NULL;
    }
    PyObject *sequence = PySequence_Fast(keys, "keys must be a sequence of str");
    if (sequence == NULL)
        goto done;
    Py_ssize_t n_keys = PySequence_Fast_GET_SIZE(sequence), n_terms = ends.len / ends.itemsize;
    result = PyList_New(n_keys);
    for (Py_ssize_t i = 0; result != NULL && i < n_keys; i++) {
        PyObject *key = PySequence_Fast_GET_ITEM(sequence, i), *encoded = NULL;
        Py_ssize_t size;
        const char *text;
        if (!PyUnicode_Check(key)) {
            PyErr_SetString(PyExc_TypeError, "keys must be str");
            Py_CLEAR(result);
            break;
        }
        text = PyUnicode_AsUTF8AndSize(key, &size);
        if (text == NULL) {  /* a lone surrogate: encoded as "surrogatepass" does */
            PyErr_Clear();
            encoded = PyUnicode_AsEncodedString(key, "utf-8", "surrogatepass");
            if (encoded == NULL) {
                Py_CLEAR(result);
                break;
            }
            text = PyBytes_AS_STRING(encoded);
            size = PyBytes_GET_SIZE(encoded);
        }
        Py_ssize_t lo = 0, hi = n_terms, found = -1;
        uint64_t start, stop;
        int bad = 0;
        while (lo < hi) {  /* the first term not below the key */
            Py_ssize_t mid = lo + (hi - lo) / 2;
            if (!term_at(&blob, &ends, mid, &start, &stop)) {
                bad = 1;
                break;
            }
            Py_ssize_t length = (Py_ssize_t)(stop - start);
            int order = memcmp((const char *)blob.buf + start, text, length < size ? length : size);
            if (order < 0 || (order == 0 && length < size))
                lo = mid + 1;
            else
                hi = mid;
        }
        if (!bad && lo < n_terms) {
            if (!term_at(&blob, &ends, lo, &start, &stop))
                bad = 1;
            else if ((Py_ssize_t)(stop - start) == size &&
                     memcmp((const char *)blob.buf + start, text, size) == 0)
                found = lo;
        }
        Py_XDECREF(encoded);
        if (bad) {
            PyErr_SetString(PyExc_ValueError, "ends do not fit the terms' bytes");
            Py_CLEAR(result);
            break;
        }
        PyObject *column = PyLong_FromSsize_t(found);
        if (column == NULL) {
            Py_CLEAR(result);
            break;
        }
        PyList_SET_ITEM(result, i, column);
    }
    Py_DECREF(sequence);
done:
    PyBuffer_Release(&blob);
    PyBuffer_Release(&ends);
    return result;
}

static PyMethodDef methods[] = {
    {"sorted_lines", sorted_lines, METH_VARARGS,
     "sorted_lines(data, lines) -> bytes or None: where each line of data ends (native "
     "uint64s: the offset after its end, plus one) if data is UTF-8 of that many lines, "
     "ascending, else None."},
    {"rows", rows, METH_VARARGS,
     "rows(indptr, classes, n_classes) -> None, 'indptr' or 'rows': whether indptr runs from "
     "0 to len(classes) without decreasing and each row's classes ascend below n_classes."},
    {"columns", columns, METH_VARARGS,
     "columns(blob, ends, keys) -> list: the index of each key (str) among a model file's "
     "sorted terms (blob, each line ended at its ends offset, minus one), or -1."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_modelfile", NULL, -1, methods,
                                    NULL, NULL, NULL, NULL};

PyMODINIT_FUNC
PyInit__modelfile(void)
{
    return PyModule_Create(&module);
}
