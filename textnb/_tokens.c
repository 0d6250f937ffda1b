/* The per-character and per-token loops of reading and counting, in C: text → tokens (the
 * tokens of textnb.text.tokens._TOKEN.findall, stop words, over-long tokens and too short words
 * dropped), tokens →
 * their numbers in a vocabulary and numbers → each document's counts (textnb.text.counting), a Received field → its addresses and
 * hosts (textnb.documents.envelope), bytes → whether they start with a header block, and a header block →
 * its fields (textnb.documents.message).
 *
 * A token holding Chinese, Japanese or Korean characters is read as their bigrams and the
 * tokens of its other parts (textnb.text.tokens._matched); a body word of three digits or more also
 * counts its shape (textnb.text.tokens.shapes).
 *
 * The Python code is the definition, and the fallback where this module is not built; each
 * scanner here follows its regular expression branch by branch, with Python's re semantics for
 * str patterns: \w is a character for which str.isalnum() is true, or "_"; \d one for which
 * str.isdecimal() is. tests/test_tokens_c.py checks that both give the same results. Python's
 * re engine spends some 60 ns a character trying a pattern, these loops a few, so what is left
 * is mostly making the token strings.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* ASCII, most of any text, from a table; other characters from Python's Unicode database. */
static unsigned char ascii_word[128];
#define IS_WORD(c) ((c) < 128 ? ascii_word[c] : (Py_UNICODE_ISALNUM(c) || (c) == '_'))
#define IS_DIGIT(c) ((c) < 128 ? ((c) >= '0' && (c) <= '9') : Py_UNICODE_ISDECIMAL(c))
#define AT(i) PyUnicode_READ(kind, data, (i))

/* The end of the token starting at i, or i if none starts there. */
static Py_ssize_t
token_end(int kind, const void *data, Py_ssize_t n, Py_ssize_t i)
{
    Py_UCS4 c = AT(i);
    Py_ssize_t j;
    if (IS_WORD(c)) {
        /* \w\w*+(?:[.'’+-]\w+|,\d+)*+(?:@\w+(?:[.-]\w+)+)? */
        j = i + 1;
        while (j < n && IS_WORD(AT(j)))
            j++;
        while (j + 1 < n) {
            Py_UCS4 p = AT(j), next = AT(j + 1);
            if ((p == '.' || p == '\'' || p == 0x2019 || p == '+' || p == '-') && IS_WORD(next)) {
                j += 2;
                while (j < n && IS_WORD(AT(j)))
                    j++;
            }
            else if (p == ',' && IS_DIGIT(next)) {
                j += 2;
                while (j < n && IS_DIGIT(AT(j)))
                    j++;
            }
            else
                break;
        }
        if (j + 1 < n && AT(j) == '@' && IS_WORD(AT(j + 1))) {
            Py_ssize_t k = j + 2, end = 0;
            while (k < n && IS_WORD(AT(k)))
                k++;
            while (k + 1 < n && (AT(k) == '.' || AT(k) == '-') && IS_WORD(AT(k + 1))) {
                k += 2;
                while (k < n && IS_WORD(AT(k)))
                    k++;
                end = k;
            }
            if (end)
                j = end;
        }
        return j;
    }
    if (c == '$' || c == 0x20AC || c == 0xA3) {
        /* (?<=[$€£])\d[\d,]*(?:\.\d+)? */
        if (i + 1 >= n || !IS_DIGIT(AT(i + 1)))
            return i;
        j = i + 2;
        while (j < n && (IS_DIGIT(AT(j)) || AT(j) == ','))
            j++;
        if (j + 1 < n && AT(j) == '.' && IS_DIGIT(AT(j + 1))) {
            j += 2;
            while (j < n && IS_DIGIT(AT(j)))
                j++;
        }
        return j;
    }
    if (c == '!') {
        /* (?<=!)(?<!!!)!{0,2}: the first "!" of a run, and at most two more */
        if (i > 0 && AT(i - 1) == '!')
            return i;
        j = i + 1;
        while (j < n && j < i + 3 && AT(j) == '!')
            j++;
        return j;
    }
    return i;
}

/* Kana, CJK ideographs and Hangul syllables (textnb.text.tokens._CJK): written without spaces, so a
 * token holding them is read as their bigrams and the tokens of its other parts. */
#define IS_CJK(c) (((c) >= 0x3040 && (c) <= 0x30FF) || ((c) >= 0x3400 && (c) <= 0x4DBF) \
                   || ((c) >= 0x4E00 && (c) <= 0x9FFF) || ((c) >= 0xAC00 && (c) <= 0xD7AF) \
                   || ((c) >= 0xF900 && (c) <= 0xFAFF) || ((c) >= 0x20000 && (c) <= 0x2FA1F))

/* Whether text[start:end] holds a CJK character (never in a one-byte string). */
static int
has_cjk(int kind, const void *data, Py_ssize_t start, Py_ssize_t end)
{
    if (kind == PyUnicode_1BYTE_KIND)
        return 0;
    for (Py_ssize_t k = start; k < end; k++)
        if (IS_CJK(AT(k)))
            return 1;
    return 0;
}

/* The next of the tokens that the token text[first:end] holding CJK characters is read as
 * (textnb.text.tokens._matched), from *at on: 1 with it in [*start, *stop) and *at moved past it,
 * or 0 at the end. Each two neighbouring CJK characters are one, a lone one is one; between
 * the runs, the tokens that start there and end before the next run. */
static int
next_piece(int kind, const void *data, Py_ssize_t first, Py_ssize_t end, Py_ssize_t *at,
           Py_ssize_t *start, Py_ssize_t *stop)
{
    Py_ssize_t p = *at;
    while (p < end) {
        if (IS_CJK(AT(p))) {
            int next = p + 1 < end && IS_CJK(AT(p + 1)), prev = p > first && IS_CJK(AT(p - 1));
            *at = p + 1;
            if (next || !prev) {  /* a pair, or a lone character; the run's last is in a pair */
                *start = p;
                *stop = p + 1 + next;
                return 1;
            }
            p++;
            continue;
        }
        Py_ssize_t run_end = p;
        while (run_end < end && !IS_CJK(AT(run_end)))
            run_end++;
        Py_ssize_t token = token_end(kind, data, run_end, p);
        if (token > p) {
            *start = p;
            *stop = *at = token;
            return 1;
        }
        p++;
    }
    *at = p;
    return 0;
}

/* Where a walk over a text's words is: the next place to look (i) and, inside a token holding
 * CJK characters, its end and the place of its next piece (at). */
typedef struct {
    Py_ssize_t i, end, at;
    int pieces;
} Words;

/* The next word of text[w->i:n] in *start, *stop: a token (token_end), or each piece of one
 * holding CJK characters (next_piece); 0 after the last. */
static int
next_word(int kind, const void *data, Py_ssize_t n, Words *w, Py_ssize_t *start,
          Py_ssize_t *stop)
{
    for (;;) {
        if (w->pieces) {
            if (next_piece(kind, data, w->i, w->end, &w->at, start, stop))
                return 1;
            w->pieces = 0;
            w->i = w->end;
        }
        if (w->i >= n)
            return 0;
        Py_ssize_t end = token_end(kind, data, n, w->i);
        if (end == w->i) {
            w->i++;
        }
        else if (has_cjk(kind, data, w->i, end)) {
            w->pieces = 1;
            w->at = w->i;
            w->end = end;
        }
        else {
            *start = w->i;
            *stop = w->i = end;
            return 1;
        }
    }
}

/* Append text[start:end] to list, prefixed by prefix (a str, or NULL), unless it is in stop
 * (a set, or NULL). */
static int
append_token(PyObject *list, PyObject *text, PyObject *prefix, PyObject *stop,
             Py_ssize_t start, Py_ssize_t end)
{
    PyObject *token = PyUnicode_Substring(text, start, end);
    if (token == NULL)
        return -1;
    int drop = stop ? PySet_Contains(stop, token) : 0;
    if (drop == 0 && prefix) {
        PyObject *joined = PyUnicode_Concat(prefix, token);
        Py_DECREF(token);
        token = joined;
        if (token == NULL)
            return -1;
    }
    int failed = drop < 0 || (drop == 0 && PyList_Append(list, token) < 0);
    Py_DECREF(token);
    return failed ? -1 : 0;
}

/* Whether text[start:end] is kept for its length: at most max_length characters, and at least
 * min_length unless it is no word (money, "!") or a CJK character or pair
 * (textnb.text.tokens.Tokenizer's min_length). */
static int
length_kept(int kind, const void *data, Py_ssize_t start, Py_ssize_t end, Py_ssize_t min_length,
            Py_ssize_t max_length)
{
    Py_UCS4 c = AT(start);
    return end - start <= max_length
           && (end - start >= min_length || !IS_WORD(c) || IS_CJK(c));
}

/* Append the tokens of text (a str) to list, each prefixed by prefix (a str, or NULL), those in
 * stop (a set, or NULL) or whose length is not kept (length_kept) left out. */
static int
append_tokens(PyObject *list, PyObject *text, PyObject *prefix, PyObject *stop,
              Py_ssize_t min_length, Py_ssize_t max_length)
{
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t n = PyUnicode_GET_LENGTH(text), start, end;
    Words w = {0};
    while (next_word(kind, data, n, &w, &start, &end))
        if (length_kept(kind, data, start, end, min_length, max_length)
                && append_token(list, text, prefix, stop, start, end) < 0)
            return -1;
    return 0;
}

/* Whether text[start:end] holds three decimal digits or more: a word with a shape. */
static int
has_shape(int kind, const void *data, Py_ssize_t start, Py_ssize_t end)
{
    int digits = 0;
    for (Py_ssize_t k = start; k < end && digits < 3; k++)
        digits += IS_DIGIT(AT(k));
    return digits == 3;
}

/* A word's shape if it has one (has_shape): each digit "#" (textnb.text.tokens.shapes); NULL with no
 * error if it has none. */
static PyObject *
shape_of(int kind, const void *data, Py_ssize_t start, Py_ssize_t end)
{
    if (!has_shape(kind, data, start, end))
        return NULL;
    Py_UCS4 *shape = PyMem_New(Py_UCS4, end - start + 1);
    if (shape == NULL)
        return PyErr_NoMemory();
    for (Py_ssize_t k = start; k < end; k++)
        shape[k - start] = IS_DIGIT(AT(k)) ? '#' : AT(k);
    PyObject *text = PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, shape, end - start);
    PyMem_Free(shape);
    return text;
}

static PyObject *
shapes(PyObject *self, PyObject *args)
{
    PyObject *words, *result;
    if (!PyArg_ParseTuple(args, "O:shapes", &words))
        return NULL;
    if ((words = PySequence_Fast(words, "shapes() takes a sequence of str")) == NULL)
        return NULL;
    PyObject *seen = PySet_New(NULL);
    if (seen == NULL || (result = PyList_New(0)) == NULL) {
        Py_XDECREF(seen);
        Py_DECREF(words);
        return NULL;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(words);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *word = PySequence_Fast_GET_ITEM(words, i), *shape;
        if (!PyUnicode_Check(word)) {
            PyErr_SetString(PyExc_TypeError, "shapes() takes a sequence of str");
            goto fail;
        }
        shape = shape_of(PyUnicode_KIND(word), PyUnicode_DATA(word), 0, PyUnicode_GET_LENGTH(word));
        if (shape == NULL && PyErr_Occurred())
            goto fail;
        if (shape != NULL) {
            int found = PySet_Contains(seen, shape);
            int failed = found < 0 || (!found && (PySet_Add(seen, shape) < 0
                                                  || PyList_Append(result, shape) < 0));
            Py_DECREF(shape);
            if (failed)
                goto fail;
        }
    }
    Py_DECREF(seen);
    Py_DECREF(words);
    return result;
fail:
    Py_DECREF(seen);
    Py_DECREF(words);
    Py_DECREF(result);
    return NULL;
}

static int
check_stop(PyObject *stop)
{
    if (stop != Py_None && !PyAnySet_Check(stop)) {
        PyErr_SetString(PyExc_TypeError, "stop words must be a set, a frozenset or None");
        return -1;
    }
    return 0;
}

static PyObject *
tokens(PyObject *self, PyObject *args)
{
    PyObject *text, *stop;
    Py_ssize_t min_length, max_length;
    if (!PyArg_ParseTuple(args, "UOnn:tokens", &text, &stop, &min_length, &max_length)
            || check_stop(stop) < 0)
        return NULL;
    PyObject *list = PyList_New(0);
    if (list == NULL)
        return NULL;
    if (append_tokens(list, text, NULL, stop == Py_None || PySet_GET_SIZE(stop) == 0 ? NULL : stop,
                      min_length, max_length) < 0) {
        Py_DECREF(list);
        return NULL;
    }
    return list;
}

static PyObject *
field_tokens(PyObject *self, PyObject *args)
{
    PyObject *list, *fields, *stop, *iterator, *item;
    int lowercase;
    Py_ssize_t max_length;
    if (!PyArg_ParseTuple(args, "O!OOpn:field_tokens", &PyList_Type, &list, &fields, &stop,
                          &lowercase, &max_length) || check_stop(stop) < 0)
        return NULL;
    if (stop != Py_None && PySet_GET_SIZE(stop) == 0)
        stop = Py_None;
    iterator = PyObject_GetIter(fields);
    if (iterator == NULL)
        return NULL;
    while ((item = PyIter_Next(iterator)) != NULL) {
        PyObject *name, *value, *prefix = NULL, *folded = NULL, *pair;
        int failed = 1;
        pair = PySequence_Tuple(item);  /* (name, value): a tuple, or any pair */
        Py_DECREF(item);
        item = pair;
        if (item == NULL) {
            Py_DECREF(iterator);
            return NULL;
        }
        if (!PyArg_ParseTuple(item, "UU:field", &name, &value))
            goto next;
        folded = lowercase ? PyObject_CallMethod(value, "casefold", NULL) : Py_NewRef(value);
        if (folded == NULL)
            goto next;
        prefix = PyUnicode_FromFormat("%U:", name);
        if (prefix == NULL)
            goto next;
        failed = append_tokens(list, folded, prefix, stop == Py_None ? NULL : stop, 1,
                               max_length) < 0;
    next:
        Py_XDECREF(prefix);
        Py_XDECREF(folded);
        Py_DECREF(item);
        if (failed) {
            Py_DECREF(iterator);
            return NULL;
        }
    }
    Py_DECREF(iterator);
    if (PyErr_Occurred())
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *
number(PyObject *self, PyObject *args)
{
    PyObject *index, *terms, *sequence, *bytes;
    int add;
    if (!PyArg_ParseTuple(args, "O!Op:number", &PyDict_Type, &index, &terms, &add))
        return NULL;
    sequence = PySequence_Fast(terms, "terms must be a sequence");
    if (sequence == NULL)
        return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(sequence);
    bytes = PyBytes_FromStringAndSize(NULL, n * (Py_ssize_t)sizeof(int64_t));
    if (bytes == NULL) {
        Py_DECREF(sequence);
        return NULL;
    }
    int64_t *out = (int64_t *)PyBytes_AS_STRING(bytes);
    PyObject **items = PySequence_Fast_ITEMS(sequence);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *found = PyDict_GetItemWithError(index, items[i]);
        if (found != NULL) {
            out[i] = PyLong_AsLongLong(found);
            if (out[i] == -1 && PyErr_Occurred())
                goto failed;
        }
        else if (PyErr_Occurred())
            goto failed;
        else if (!add)
            out[i] = -1;
        else {
            PyObject *next = PyLong_FromSsize_t(PyDict_GET_SIZE(index));
            if (next == NULL || PyDict_SetItem(index, items[i], next) < 0) {
                Py_XDECREF(next);
                goto failed;
            }
            out[i] = PyDict_GET_SIZE(index) - 1;
            Py_DECREF(next);
        }
    }
    Py_DECREF(sequence);
    return bytes;
failed:
    Py_DECREF(sequence);
    Py_DECREF(bytes);
    return NULL;
}

/* The end of the IPv4 address starting at i, its octets' ends in ends[0..3], or i if none:
 * (\d(?<![\d.]\d)\d{0,2})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})(?![\d.]) (textnb.documents.envelope._patterns: ip). */
static Py_ssize_t
ip_end(int kind, const void *data, Py_ssize_t n, Py_ssize_t i, Py_ssize_t ends[4])
{
    if (i > 0 && (IS_DIGIT(AT(i - 1)) || AT(i - 1) == '.'))
        return i;
    Py_ssize_t p = i;
    for (int k = 0; k < 4; k++) {
        Py_ssize_t start = p;
        while (p < n && p - start < 4 && IS_DIGIT(AT(p)))
            p++;
        if (p == start || p - start > 3)
            return i;
        ends[k] = p;
        if (k < 3) {
            if (p >= n || AT(p) != '.')
                return i;
            p++;
        }
    }
    if (p < n && (IS_DIGIT(AT(p)) || AT(p) == '.'))
        return i;
    return p;
}

#define IS_LABEL(c) (IS_WORD(c) || (c) == '-')

/* The end of the host name starting at i, or i if none:
 * (?<![\w.-])[a-z\d][\w-]*(?:\.[\w-]+)+ (textnb.documents.envelope._patterns: host). */
static Py_ssize_t
host_end(int kind, const void *data, Py_ssize_t n, Py_ssize_t i)
{
    Py_UCS4 c = AT(i);
    if (!((c >= 'a' && c <= 'z') || IS_DIGIT(c)))
        return i;
    if (i > 0 && (IS_LABEL(AT(i - 1)) || AT(i - 1) == '.'))
        return i;
    Py_ssize_t p = i + 1, end = i;
    while (p < n && IS_LABEL(AT(p)))
        p++;
    while (p + 1 < n && AT(p) == '.' && IS_LABEL(AT(p + 1))) {
        p += 2;
        while (p < n && IS_LABEL(AT(p)))
            p++;
        end = p;
    }
    return end;
}

/* Append text[start:end] to list if it is not in seen (a set); -1 on error. */
static int
append_new(PyObject *list, PyObject *seen, PyObject *text, Py_ssize_t start, Py_ssize_t end)
{
    PyObject *word = PyUnicode_Substring(text, start, end);
    if (word == NULL)
        return -1;
    int found = PySet_Contains(seen, word);
    int failed = found < 0 || (!found && (PySet_Add(seen, word) < 0
                                          || PyList_Append(list, word) < 0));
    Py_DECREF(word);
    return failed ? -1 : 0;
}

static PyObject *
joined(PyObject *words)
{
    PyObject *space = PyUnicode_FromOrdinal(' '), *text;
    if (space == NULL)
        return NULL;
    text = PyUnicode_Join(space, words);
    Py_DECREF(space);
    return text;
}

/* Pieces of one ASCII text: where each starts, how long it is. */
typedef struct {
    const char *text;
    Py_ssize_t *start, *size, n;
} Spans;

/* The spans joined by spaces, as a str; if distinct, each once, in their first order (a small
 * table of their places hashed by FNV-1a, so that a hostile value of a thousand domains costs
 * linear time). Made without a str a span, as the envelope's values are (textnb.documents.envelope). */
static PyObject *
spans_joined(const Spans *spans, int distinct)
{
    Py_ssize_t slots = 16, total = 0, kept = 0;
    while (slots < 2 * spans->n)
        slots *= 2;
    Py_ssize_t *table = PyMem_Calloc(slots, sizeof(Py_ssize_t)), *order = PyMem_Malloc(
        (spans->n + 1) * sizeof(Py_ssize_t));
    PyObject *joined = NULL;
    if (table == NULL || order == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t k = 0; k < spans->n; k++) {
        const char *word = spans->text + spans->start[k];
        Py_ssize_t size = spans->size[k];
        uint64_t hash = 0xcbf29ce484222325ULL;
        for (Py_ssize_t i = 0; i < size; i++)
            hash = (hash ^ (unsigned char)word[i]) * 0x100000001b3ULL;
        Py_ssize_t t = (Py_ssize_t)(hash & (uint64_t)(slots - 1));
        for (; distinct && table[t]; t = (t + 1) & (slots - 1)) {
            Py_ssize_t other = table[t] - 1;
            if (spans->size[other] == size
                    && memcmp(spans->text + spans->start[other], word, size) == 0)
                break;
        }
        if (distinct && table[t])
            continue;
        table[t] = k + 1;
        order[kept++] = k;
        total += size + (kept > 1);
    }
    joined = PyUnicode_New(total, 127);
    if (joined == NULL)
        goto done;
    char *out = (char *)PyUnicode_DATA(joined);
    for (Py_ssize_t k = 0; k < kept; k++) {
        if (k)
            *out++ = ' ';
        memcpy(out, spans->text + spans->start[order[k]], spans->size[order[k]]);
        out += spans->size[order[k]];
    }
done:
    PyMem_Free(table);
    PyMem_Free(order);
    return joined;
}

/* Add a span, if there is room (the callers' capacity is a bound on their spans). */
static void
spans_add(Spans *spans, Py_ssize_t start, Py_ssize_t size, Py_ssize_t capacity)
{
    if (spans->n < capacity) {
        spans->start[spans->n] = start;
        spans->size[spans->n++] = size;
    }
}

/* received_of for ASCII text: the same spans, each joined from the text's own bytes. */
static PyObject *
received_ascii(PyObject *text)
{
    const int kind = PyUnicode_1BYTE_KIND;
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t n = PyUnicode_GET_LENGTH(text), capacity = n + 4, ends[4], end;
    PyObject *ip_text = NULL, *host_text = NULL, *result = NULL;
    Py_ssize_t *room = PyMem_Malloc(4 * capacity * sizeof(Py_ssize_t));
    if (room == NULL)
        return PyErr_NoMemory();
    Spans ips = {data, room, room + capacity, 0};
    Spans hosts = {data, room + 2 * capacity, room + 3 * capacity, 0};
    for (Py_ssize_t i = 0; i < n; i++) {
        if (!IS_DIGIT(AT(i)) || (end = ip_end(kind, data, n, i, ends)) == i)
            continue;
        for (int k = 1; k < 4; k++)
            spans_add(&ips, i, ends[k] - i, capacity);
        i = end - 1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if ((end = host_end(kind, data, n, i)) == i)
            continue;
        int digits = 1;
        for (Py_ssize_t k = i; k < end && digits; k++)
            digits = AT(k) == '.' || IS_DIGIT(AT(k));
        if (!digits)
            spans_add(&hosts, i, end - i, capacity);
        i = end - 1;
    }
    /* then each one's last two labels: after its second-last dot, if it has two */
    for (Py_ssize_t h = 0, found = hosts.n; h < found; h++) {
        Py_ssize_t start = hosts.start[h], stop = start + hosts.size[h], dots = 0;
        for (Py_ssize_t k = stop - 1; k > hosts.start[h]; k--)
            if (AT(k) == '.' && ++dots == 2) {
                start = k + 1;
                break;
            }
        spans_add(&hosts, start, stop - start, capacity);
    }
    if ((ip_text = spans_joined(&ips, 0)) != NULL && (host_text = spans_joined(&hosts, 1)) != NULL)
        result = PyTuple_Pack(2, ip_text, host_text);
    Py_XDECREF(ip_text);
    Py_XDECREF(host_text);
    PyMem_Free(room);
    return result;
}

static PyObject *
received_of(PyObject *text)
{
    if (PyUnicode_IS_ASCII(text))  /* nearly every one, in half the time */
        return received_ascii(text);
    PyObject *ips = NULL, *hosts = NULL, *seen = NULL, *result = NULL;
    PyObject *ip_text = NULL, *host_text = NULL;
    Py_ssize_t ends[4], first_host = -1;
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t n = PyUnicode_GET_LENGTH(text), i, end;
    if ((ips = PyList_New(0)) == NULL || (hosts = PyList_New(0)) == NULL
            || (seen = PySet_New(NULL)) == NULL)
        goto done;
    /* "a.b a.b.c a.b.c.d" for each address */
    for (i = 0; i < n; i++) {
        if (!IS_DIGIT(AT(i)) || (end = ip_end(kind, data, n, i, ends)) == i)
            continue;
        for (int k = 1; k < 4; k++) {
            PyObject *prefix = PyUnicode_Substring(text, i, ends[k]);
            if (prefix == NULL || PyList_Append(ips, prefix) < 0) {
                Py_XDECREF(prefix);
                goto done;
            }
            Py_DECREF(prefix);
        }
        i = end - 1;
    }
    /* the distinct host names not all digits, then their last two labels */
    for (int pass = 0; pass < 2; pass++) {
        for (i = 0; i < n; i++) {
            if ((end = host_end(kind, data, n, i)) == i)
                continue;
            int digits = 1;
            for (Py_ssize_t k = i; k < end && digits; k++)
                digits = AT(k) == '.' || (AT(k) < 128 ? IS_DIGIT(AT(k)) : Py_UNICODE_ISDIGIT(AT(k)));
            if (!digits) {
                Py_ssize_t start = i, dots = 0;
                if (pass == 1)  /* after the second-last dot, if there are two */
                    for (Py_ssize_t k = end - 1; k > i; k--)
                        if (AT(k) == '.' && ++dots == 2) {
                            start = k + 1;
                            break;
                        }
                if (append_new(hosts, seen, text, start, end) < 0)
                    goto done;
                first_host = 0;
            }
            i = end - 1;
        }
        if (first_host < 0)
            break;  /* no host: nothing to register */
    }
    if ((ip_text = joined(ips)) != NULL && (host_text = joined(hosts)) != NULL)
        result = PyTuple_Pack(2, ip_text, host_text);
done:
    Py_XDECREF(ips);
    Py_XDECREF(hosts);
    Py_XDECREF(seen);
    Py_XDECREF(ip_text);
    Py_XDECREF(host_text);
    return result;
}

static PyObject *
received(PyObject *self, PyObject *args)
{
    PyObject *text;
    if (!PyArg_ParseTuple(args, "U:received", &text))
        return NULL;
    return received_of(text);
}

/* -- the envelope: textnb.documents.envelope.envelope_fields of ASCII header values ------------------- */

/* Append (name, value) to list, both new references taken. */
static int
append_pair(PyObject *list, PyObject *name, PyObject *value)
{
    PyObject *pair = name && value ? PyTuple_Pack(2, name, value) : NULL;
    int failed = pair == NULL || PyList_Append(list, pair) < 0;
    Py_XDECREF(pair);
    Py_XDECREF(name);
    Py_XDECREF(value);
    return failed ? -1 : 0;
}

#define IS_SPACE(c) Py_UNICODE_ISSPACE(c)
#define LOWER(c) ((c) >= 'A' && (c) <= 'Z' ? (c) + 32 : (c))
#define IS_ASCII_WORD(c) (ascii_word[(unsigned char)(c)])
#define IS_DOMAIN_LABEL(c) (IS_ASCII_WORD(c) || (c) == '-')

/* The domains after "@" of the lower-case text v[0:n], (?<=@)[\w-]+(?:\.[\w-]+)+, appended to
 * fields as "name-domain" (them, then their last two labels) and "name-tld" (their last). */
static int
address_fields(PyObject *fields, PyObject *name, const char *v, Py_ssize_t n)
{
    Py_ssize_t capacity = 2 * (n / 2 + 1);
    Py_ssize_t *room = PyMem_Malloc(4 * capacity * sizeof(Py_ssize_t));
    if (room == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    Spans domains = {v, room, room + capacity, 0}, tlds = {v, room + 2 * capacity,
                                                            room + 3 * capacity, 0};
    Py_ssize_t found = 0;
    for (Py_ssize_t i = 1; i < n;) {
        if (v[i - 1] != '@' || !IS_DOMAIN_LABEL(v[i])) {
            i++;
            continue;
        }
        Py_ssize_t j = i, end = 0;
        while (j < n && IS_DOMAIN_LABEL(v[j]))
            j++;
        while (j + 1 < n && v[j] == '.' && IS_DOMAIN_LABEL(v[j + 1])) {
            j += 2;
            while (j < n && IS_DOMAIN_LABEL(v[j]))
                j++;
            end = j;
        }
        if (!end) {
            i++;
            continue;
        }
        spans_add(&domains, i, end - i, capacity);
        i = end;
        found++;
    }
    /* then each domain's registered domain, and each one's top-level domain */
    for (Py_ssize_t k = 0; k < found; k++) {
        Py_ssize_t start = domains.start[k], end = start + domains.size[k], cut = start, dots = 0;
        for (Py_ssize_t p = end - 1; p > start; p--)
            if (v[p] == '.' && ++dots == 2) {
                cut = p + 1;
                break;
            }
        spans_add(&domains, cut, end - cut, capacity);
        Py_ssize_t last = end - 1;
        while (v[last] != '.')
            last--;
        spans_add(&tlds, last + 1, end - last - 1, capacity);
    }
    int failed = 0;
    if (found)
        failed = append_pair(fields, PyUnicode_FromFormat("%U-domain", name),
                             spans_joined(&domains, 1)) < 0
                 || append_pair(fields, PyUnicode_FromFormat("%U-tld", name),
                                spans_joined(&tlds, 1)) < 0;
    PyMem_Free(room);
    return failed ? -1 : 0;
}

/* A Message-ID's shape and domain: <?([^@<>\s]{0,200})@?([^>\s]{0,200}) on the stripped value,
 * the first group's runs of digits, lower- and upper-case letters each one 9, a or A. */
static int
message_id_fields(PyObject *fields, const char *v, Py_ssize_t n)
{
    Py_ssize_t i = 0, start, left, right;
    while (n > 0 && IS_SPACE((unsigned char)v[n - 1]))
        n--;
    while (i < n && IS_SPACE((unsigned char)v[i]))
        i++;
    Py_ssize_t begin = i;
    if (i < n && v[i] == '<')
        i++;
    for (start = i; i < n && i - start < 200; i++) {
        char c = v[i];
        if (c == '@' || c == '<' || c == '>' || IS_SPACE((unsigned char)c))
            break;
    }
    left = i;
    if (i < n && v[i] == '@')
        i++;
    for (right = i; i < n && i - right < 200; i++)
        if (v[i] == '>' || IS_SPACE((unsigned char)v[i]))
            break;
    if (i == begin)
        return 0;  /* an empty match: nothing */
    char shape[30];
    Py_ssize_t size = 0;
    for (Py_ssize_t k = start; k < left && size < 30;) {
        char c = v[k], mark = c >= '0' && c <= '9' ? '9' : c >= 'a' && c <= 'z' ? 'a'
                              : c >= 'A' && c <= 'Z' ? 'A' : 0;
        shape[size++] = mark ? mark : c;
        k++;
        if (mark)  /* the rest of the run */
            while (k < left && (mark == '9' ? v[k] >= '0' && v[k] <= '9'
                                : mark == 'a' ? v[k] >= 'a' && v[k] <= 'z'
                                : v[k] >= 'A' && v[k] <= 'Z'))
                k++;
    }
    if (append_pair(fields, PyUnicode_FromString("message-id-shape"),
                    PyUnicode_FromStringAndSize(shape, size)) < 0)
        return -1;
    if (i == right)
        return 0;
    PyObject *domain = PyUnicode_New(i - right, 127);
    if (domain == NULL)
        return -1;
    char *out = (char *)PyUnicode_DATA(domain);
    for (Py_ssize_t k = right; k < i; k++)
        out[k - right] = LOWER(v[k]);
    return append_pair(fields, PyUnicode_FromString("message-id-domain"), domain);
}

/* The time zone of a Date: ([+-]\d{4}|[A-Z]{1,5})\W*$ searched in the last 40 characters of the
 * stripped value, else "none". */
static int
date_fields(PyObject *fields, const char *v, Py_ssize_t n)
{
    Py_ssize_t i = 0;
    while (n > 0 && IS_SPACE((unsigned char)v[n - 1]))
        n--;
    while (i < n && IS_SPACE((unsigned char)v[i]))
        i++;
    if (n - i > 40)
        i = n - 40;
    /* the text from where only non-word characters follow */
    Py_ssize_t tail = n;
    while (tail > i && !IS_ASCII_WORD(v[tail - 1]))
        tail--;
    for (; i < tail; i++) {
        Py_ssize_t end = i;
        if ((v[i] == '+' || v[i] == '-') && i + 5 <= n) {
            end = i + 1;
            while (end < i + 5 && v[end] >= '0' && v[end] <= '9')
                end++;
            end = end == i + 5 ? end : i;
        }
        else if (v[i] >= 'A' && v[i] <= 'Z') {
            while (end < n && end < i + 6 && v[end] >= 'A' && v[end] <= 'Z')
                end++;
            end = end - i <= 5 ? end : i;
        }
        if (end > i && end >= tail)
            return append_pair(fields, PyUnicode_FromString("date-zone"),
                               PyUnicode_FromStringAndSize(v + i, end - i));
    }
    return append_pair(fields, PyUnicode_FromString("date-zone"), PyUnicode_FromString("none"));
}

/* A short value as one token: lower case, whitespace runs one space, at most 40 characters. */
static int
value_field(PyObject *fields, PyObject *name, const char *v, Py_ssize_t n)
{
    char out[40];
    Py_ssize_t size = 0, i = 0;
    while (i < n && size < 40) {
        while (i < n && IS_SPACE((unsigned char)v[i]))
            i++;
        if (i == n)
            break;
        if (size)
            out[size++] = ' ';
        while (i < n && size < 40 && !IS_SPACE((unsigned char)v[i])) {
            out[size++] = LOWER(v[i]);
            i++;
        }
        while (i < n && !IS_SPACE((unsigned char)v[i]))
            i++;
    }
    return append_pair(fields, Py_NewRef(name), PyUnicode_FromStringAndSize(out, size));
}

static PyObject *
envelope(PyObject *self, PyObject *args)
{
    PyObject *headers, *reads, *addresses, *values, *fields = NULL, *item;
    Py_ssize_t max_fields, max_value;
    if (!PyArg_ParseTuple(args, "OO!O!O!nn:envelope", &headers, &PyFrozenSet_Type, &reads,
                          &PyTuple_Type, &addresses, &PyFrozenSet_Type, &values, &max_fields,
                          &max_value))
        return NULL;
    PyObject *sequence = PySequence_Fast(headers, "headers must be a sequence");
    if (sequence == NULL)
        return NULL;
    Py_ssize_t count = PySequence_Fast_GET_SIZE(sequence);
    if (count > max_fields)
        count = max_fields;
    if ((fields = PyList_New(0)) == NULL)
        goto failed;
    for (Py_ssize_t h = 0; h < count; h++) {
        item = PySequence_Fast_GET_ITEM(sequence, h);
        /* Each header a (str, str) pair, each value read ASCII: else None, for Python. */
        if (!PyTuple_CheckExact(item) || PyTuple_GET_SIZE(item) != 2
                || !PyUnicode_Check(PyTuple_GET_ITEM(item, 0))
                || !PyUnicode_Check(PyTuple_GET_ITEM(item, 1)))
            goto none;
        PyObject *name = PyTuple_GET_ITEM(item, 0), *value = PyTuple_GET_ITEM(item, 1);
        int read = PySet_Contains(reads, name);
        if (read < 0)
            goto failed;
        if (!read)
            continue;
        if (!PyUnicode_IS_ASCII(value))
            goto none;
        const char *v = (const char *)PyUnicode_DATA(value);
        Py_ssize_t n = PyUnicode_GET_LENGTH(value);
        if (n > max_value)
            n = max_value;
        int bad = 0, address;
        if (PyUnicode_CompareWithASCIIString(name, "received") == 0) {
            PyObject *lower = PyUnicode_New(n, 127), *found;
            if (lower == NULL)
                goto failed;
            char *out = (char *)PyUnicode_DATA(lower);
            for (Py_ssize_t k = 0; k < n; k++)
                out[k] = LOWER(v[k]);
            found = received_of(lower);
            Py_DECREF(lower);
            if (found == NULL)
                goto failed;
            PyObject *ips = PyTuple_GET_ITEM(found, 0), *hosts = PyTuple_GET_ITEM(found, 1);
            bad = (PyUnicode_GET_LENGTH(ips)
                   && append_pair(fields, PyUnicode_FromString("ip"), Py_NewRef(ips)) < 0)
                  || (PyUnicode_GET_LENGTH(hosts)
                      && append_pair(fields, PyUnicode_FromString("received"),
                                     Py_NewRef(hosts)) < 0);
            Py_DECREF(found);
        }
        else if ((address = PySequence_Contains(addresses, name)) != 0) {
            char *lower = address < 0 ? NULL : PyMem_Malloc(n + 1);
            if (lower == NULL) {
                if (address > 0)
                    PyErr_NoMemory();
                goto failed;
            }
            for (Py_ssize_t k = 0; k < n; k++)
                lower[k] = LOWER(v[k]);
            bad = address_fields(fields, name, lower, n) < 0;
            PyMem_Free(lower);
        }
        else if (PyUnicode_CompareWithASCIIString(name, "message-id") == 0)
            bad = message_id_fields(fields, v, n) < 0;
        else if ((address = PySet_Contains(values, name)) != 0)
            bad = address < 0 || value_field(fields, name, v, n) < 0;
        else if (PyUnicode_CompareWithASCIIString(name, "date") == 0)
            bad = date_fields(fields, v, n) < 0;
        if (bad)
            goto failed;
    }
    Py_DECREF(sequence);
    return fields;
none:
    Py_DECREF(sequence);
    Py_DECREF(fields);
    Py_RETURN_NONE;
failed:
    Py_DECREF(sequence);
    Py_XDECREF(fields);
    return NULL;
}

/* A header field's name: a run of the bytes [!-9;-~] (printable ASCII but ":"). */
#define IS_NAME(c) ((c) >= '!' && (c) <= '~' && (c) != ':')

static PyObject *
starts_with_header_block(const char *raw, Py_ssize_t n, PyObject *known, Py_ssize_t sniff)
{
    /* textnb.documents.message._is_message: after an optional "From " line, every line up to the first
     * blank one ("" or "\r") a continuation (a blank or tab first) or a field ("Name:"), one of
     * the names (lower case) in known, and a blank line after them or two fields or more. */
    Py_ssize_t size = n < sniff ? n : sniff, end = size, i = 0;
    const char *blank = NULL;
    for (Py_ssize_t k = 0; k + 1 < size; k++)
        if (raw[k] == '\n' && raw[k + 1] == '\n') {
            blank = raw + k;
            break;
        }
    if (blank)
        end = blank - raw + 1;
    else if (size < n) {  /* the last line was cut: left out */
        while (end > 0 && raw[end - 1] != '\n')
            end--;
    }
    if (end >= 5 && memcmp(raw, "From ", 5) == 0) {
        while (i < end && raw[i] != '\n')
            i++;
        i++;
    }
    int found = 0, ended = blank != NULL;
    Py_ssize_t fields = 0;
    while (i < end) {
        Py_ssize_t stop = i;
        while (stop < end && raw[stop] != '\n')
            stop++;
        if (stop == i || (stop == i + 1 && raw[i] == '\r')) {
            ended = 1;
            break;
        }
        if (raw[i] != ' ' && raw[i] != '\t') {
            Py_ssize_t name = 0;
            fields++;
            while (i + name < stop && IS_NAME((unsigned char)raw[i + name]))
                name++;
            if (name == 0 || i + name >= stop || raw[i + name] != ':')
                Py_RETURN_FALSE;
            char lower[64];  /* a longer name is none of the known ones */
            if (!found && name <= (Py_ssize_t)sizeof(lower)) {
                for (Py_ssize_t k = 0; k < name; k++)
                    lower[k] = (char)Py_TOLOWER((unsigned char)raw[i + k]);
                PyObject *word = PyBytes_FromStringAndSize(lower, name);
                if (word == NULL)
                    return NULL;
                found = PySet_Contains(known, word);
                Py_DECREF(word);
                if (found < 0)
                    return NULL;
            }
        }
        i = stop + 1;
    }
    return PyBool_FromLong(found && (ended || fields > 1));
}

static PyObject *
is_message(PyObject *self, PyObject *args)
{
    Py_buffer buffer;
    Py_ssize_t sniff;
    PyObject *known, *answer;
    if (!PyArg_ParseTuple(args, "y*O!n:is_message", &buffer, &PyFrozenSet_Type, &known, &sniff))
        return NULL;
    answer = starts_with_header_block((const char *)buffer.buf, buffer.len, known, sniff);
    PyBuffer_Release(&buffer);
    return answer;
}

static PyObject *
header_fields(PyObject *self, PyObject *args)
{
    /* textnb.documents.message._header_block's split of an ASCII header block (every line ending in
     * "\n"): [(lower-case name, value)], the value after the colon and its blanks, with its
     * continuation lines and without the last line end; None if a line is neither a field
     * ("Name:") nor, after one, a continuation (a blank or tab first). */
    PyObject *text, *fields = NULL;
    if (!PyArg_ParseTuple(args, "U:header_fields", &text))
        return NULL;
    if (!PyUnicode_IS_ASCII(text)) {
        PyErr_SetString(PyExc_ValueError, "header_fields needs ASCII text");
        return NULL;
    }
    const char *data = (const char *)PyUnicode_DATA(text);
    Py_ssize_t n = PyUnicode_GET_LENGTH(text), i = 0;
    if (n && data[n - 1] != '\n')
        Py_RETURN_NONE;
    if ((fields = PyList_New(0)) == NULL)
        return NULL;
    while (i < n) {
        Py_ssize_t name = 0, start, stop;
        while (i + name < n && IS_NAME((unsigned char)data[i + name]))
            name++;
        if (name == 0 || data[i + name] != ':') {
            Py_DECREF(fields);
            Py_RETURN_NONE;
        }
        start = i + name + 1;
        while (data[start] == ' ' || data[start] == '\t')
            start++;
        stop = start;  /* the value's end: its line's, then each continuation line's */
        while (data[stop] != '\n')
            stop++;
        while (stop + 1 < n && (data[stop + 1] == ' ' || data[stop + 1] == '\t')) {
            stop++;
            while (data[stop] != '\n')
                stop++;
        }
        char lower[256];
        PyObject *key, *value, *pair;
        if (name <= (Py_ssize_t)sizeof(lower)) {
            for (Py_ssize_t k = 0; k < name; k++)
                lower[k] = (char)Py_TOLOWER((unsigned char)data[i + k]);
            key = PyUnicode_FromStringAndSize(lower, name);
        }
        else {
            PyObject *raw = PyUnicode_Substring(text, i, i + name);
            key = raw ? PyObject_CallMethod(raw, "lower", NULL) : NULL;
            Py_XDECREF(raw);
        }
        value = PyUnicode_Substring(text, start, stop);
        pair = key && value ? PyTuple_Pack(2, key, value) : NULL;
        Py_XDECREF(key);
        Py_XDECREF(value);
        if (pair == NULL || PyList_Append(fields, pair) < 0) {
            Py_XDECREF(pair);
            Py_DECREF(fields);
            return NULL;
        }
        Py_DECREF(pair);
        i = stop + 1;
    }
    return fields;
}

/* Each document's term numbers (ids, int64; document d's end at ends[d]) → its counts, CSR over
 * the terms sorted: order[k] is the number of the k-th term in order, so term t's column is
 * the k with order[k] == t. A dense counter over the part's terms gives each document's
 * distinct columns, unsorted; they are then sorted all at once by their columns, as a
 * transpose and back does (a counting sort): no sort of every token, as numpy.unique of the
 * whole part does, nor one of each document's columns (qsort's calls took a part 5–7 ms of 40). */
static PyObject *
count(PyObject *self, PyObject *args)
{
    Py_buffer ids, ends, order;
    PyObject *data = NULL, *indices = NULL, *indptr = NULL, *result = NULL;
    int64_t *rank = NULL, *tally = NULL, *first = NULL, *next = NULL;
    int32_t *owner = NULL;
    double *amount = NULL;
    if (!PyArg_ParseTuple(args, "y*y*y*:count", &ids, &ends, &order))
        return NULL;
    Py_ssize_t n_ids = ids.len / 8, n_documents = ends.len / 8, n_terms = order.len / 8;
    const int64_t *id = ids.buf, *end = ends.buf, *term = order.buf;
    if (ids.len % 8 || ends.len % 8 || order.len % 8 || n_terms > INT32_MAX
            || n_documents > INT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "ids, ends and order must be int64 arrays");
        goto done;
    }
    rank = PyMem_Malloc((n_terms + 1) * sizeof(int64_t));
    tally = PyMem_Calloc(n_terms + 1, sizeof(int64_t));
    first = PyMem_Calloc(n_terms + 2, sizeof(int64_t));  /* a column's first place, then next */
    next = PyMem_Malloc((n_documents + 1) * sizeof(int64_t));
    data = PyByteArray_FromStringAndSize(NULL, n_ids * (Py_ssize_t)sizeof(double));
    indices = PyByteArray_FromStringAndSize(NULL, n_ids * (Py_ssize_t)sizeof(int32_t));
    indptr = PyByteArray_FromStringAndSize(NULL, (n_documents + 1) * (Py_ssize_t)sizeof(int64_t));
    if (!rank || !tally || !first || !next) {
        PyErr_NoMemory();
        goto done;
    }
    if (!data || !indices || !indptr)
        goto done;
    for (Py_ssize_t t = 0; t < n_terms; t++)
        rank[t] = -1;
    for (Py_ssize_t k = 0; k < n_terms; k++) {
        if (term[k] < 0 || term[k] >= n_terms || rank[term[k]] >= 0) {
            PyErr_SetString(PyExc_ValueError, "order must number each term once");
            goto done;
        }
        rank[term[k]] = k;
    }
    double *counts = (double *)PyByteArray_AS_STRING(data);
    int32_t *columns = (int32_t *)PyByteArray_AS_STRING(indices);
    int64_t *starts = (int64_t *)PyByteArray_AS_STRING(indptr);
    Py_ssize_t i = 0, filled = 0;
    starts[0] = 0;
    /* Each document's distinct columns and their counts, in the order first found. */
    for (Py_ssize_t d = 0; d < n_documents; d++) {
        if (end[d] < i || end[d] > n_ids) {
            PyErr_SetString(PyExc_ValueError, "ends must ascend, up to the number of ids");
            goto done;
        }
        Py_ssize_t row = filled;
        for (; i < end[d]; i++) {
            if (id[i] < 0 || id[i] >= n_terms) {
                PyErr_SetString(PyExc_ValueError, "an id is not a term's number");
                goto done;
            }
            int32_t column = (int32_t)rank[id[i]];
            if (tally[column]++ == 0)
                columns[filled++] = column;
        }
        for (Py_ssize_t k = row; k < filled; k++) {
            counts[k] = (double)tally[columns[k]];
            tally[columns[k]] = 0;
            first[columns[k] + 2]++;
        }
        starts[d + 1] = filled;
    }
    /* By column, each document's entry in document order; then back into the rows, column
     * by column, so that each row's columns ascend. */
    owner = PyMem_Malloc((filled + 1) * sizeof(int32_t));
    amount = PyMem_Malloc((filled + 1) * sizeof(double));
    if (!owner || !amount) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t c = 0; c < n_terms; c++)
        first[c + 2] += first[c + 1];
    for (Py_ssize_t d = 0; d < n_documents; d++)
        for (Py_ssize_t k = starts[d]; k < starts[d + 1]; k++) {
            int64_t at = first[columns[k] + 1]++;
            owner[at] = (int32_t)d;
            amount[at] = counts[k];
        }
    memcpy(next, starts, n_documents * sizeof(int64_t));
    for (Py_ssize_t c = 0, at = 0; c < n_terms; c++)
        for (; at < first[c + 1]; at++) {
            int64_t k = next[owner[at]]++;
            columns[k] = (int32_t)c;
            counts[k] = amount[at];
        }
    if (PyByteArray_Resize(data, filled * (Py_ssize_t)sizeof(double)) == 0 &&
            PyByteArray_Resize(indices, filled * (Py_ssize_t)sizeof(int32_t)) == 0)
        result = PyTuple_Pack(3, data, indices, indptr);
done:
    PyMem_Free(rank);
    PyMem_Free(tally);
    PyMem_Free(first);
    PyMem_Free(next);
    PyMem_Free(owner);
    PyMem_Free(amount);
    Py_XDECREF(data);
    Py_XDECREF(indices);
    Py_XDECREF(indptr);
    PyBuffer_Release(&ids);
    PyBuffer_Release(&ends);
    PyBuffer_Release(&order);
    return result;
}

/* -- Numbering: text → its tokens' numbers, no str made for a token seen before -------------- */

/* A part's distinct tokens in a table of our own, keyed by a token's UTF-8 and its field, so
 * that counting makes a str only for a new term, where the token lists made one a token and
 * then looked it up twice (the stop words, the vocabulary's dict). A lookup reads a slot, then
 * the token's record (its number and UTF-8, also what joining needs): two places in memory
 * where a dict reads three. The hash is SipHash-1-3 (Python's own string hash) under a random
 * key, so that no text can be made to collide in the table. Tokens never hold a surrogate
 * (none is a word character), so their UTF-8 is always defined. */

typedef struct {
    char *data;
    Py_ssize_t size, capacity;
} Buffer;

static int
buffer_add(Buffer *b, const void *data, Py_ssize_t size)
{
    if (b->size + size > b->capacity) {
        Py_ssize_t capacity = (b->size + size) * 2 + 256;
        char *grown = PyMem_Realloc(b->data, capacity);
        if (grown == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        b->data = grown;
        b->capacity = capacity;
    }
    memcpy(b->data + b->size, data, size);
    b->size += size;
    return 0;
}

/* A token's record in the table's records, 8-byte aligned, its UTF-8 after it. */
typedef struct {
    int64_t number;      /* in the index; -1: a stop word */
    int32_t prefix;      /* its field's number; -1: the body */
    int32_t size;        /* bytes of UTF-8 */
} Record;

#define RECORD(self, at) ((Record *)((self)->records.data + (at)))

typedef struct {
    PyObject_HEAD
    PyObject *index;     /* dict term → number, filled as terms are found */
    PyObject *stop;      /* set, or NULL */
    PyObject *prefixes;  /* dict field name → its number */
    PyObject *prefix_strings;  /* list: number → "name:" */
    PyObject *prefix_utf8;     /* list: number → "name:" in UTF-8 ("replace") */
    int lowercase;
    Py_ssize_t min_length, max_length;  /* min_length: of body words */
    uint64_t k0, k1;
    Buffer records;
    /* Open addressing: 0, or a record's place / 8 + 1 below its hash's upper 32 bits, so that
     * a probe passes other records without reading them. */
    uint64_t *slots;
    Py_ssize_t mask, used;
    Buffer token;        /* the token being looked up, in UTF-8 */
} Numbering;

#define ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))
#define SIPROUND do { \
    v0 += v1; v1 = ROTL(v1, 13); v1 ^= v0; v0 = ROTL(v0, 32); \
    v2 += v3; v3 = ROTL(v3, 16); v3 ^= v2; \
    v0 += v3; v3 = ROTL(v3, 21); v3 ^= v0; \
    v2 += v1; v1 = ROTL(v1, 17); v1 ^= v2; v2 = ROTL(v2, 32); } while (0)
#define SIPBLOCK(m) do { uint64_t m_ = (m); v3 ^= m_; SIPROUND; v0 ^= m_; } while (0)

/* SipHash-1-3 of the field's number + 1 (8 bytes, little-endian) and then the bytes. */
static uint64_t
token_hash(const Numbering *self, Py_ssize_t prefix, const unsigned char *bytes, Py_ssize_t n)
{
    uint64_t v0 = self->k0 ^ 0x736f6d6570736575ULL, v1 = self->k1 ^ 0x646f72616e646f6dULL;
    uint64_t v2 = self->k0 ^ 0x6c7967656e657261ULL, v3 = self->k1 ^ 0x7465646279746573ULL;
    Py_ssize_t i = 0;
    SIPBLOCK((uint64_t)(prefix + 1));
    for (; i + 8 <= n; i += 8) {
        uint64_t m = 0;
        for (int k = 7; k >= 0; k--)
            m = m << 8 | bytes[i + k];
        SIPBLOCK(m);
    }
    uint64_t last = (uint64_t)(n + 8) << 56;
    for (int k = 0; i + k < n; k++)
        last |= (uint64_t)bytes[i + k] << (8 * k);
    SIPBLOCK(last);
    v2 ^= 0xff;
    SIPROUND;
    SIPROUND;
    SIPROUND;
    return v0 ^ v1 ^ v2 ^ v3;
}

/* text[start:end] in UTF-8 into self->token. */
static int
encode_token(Numbering *self, int kind, const void *data, Py_ssize_t start, Py_ssize_t end)
{
    Py_ssize_t need = 4 * (end - start);
    if (need > self->token.capacity) {
        char *grown = PyMem_Realloc(self->token.data, need);
        if (grown == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        self->token.data = grown;
        self->token.capacity = need;
    }
    unsigned char *out = (unsigned char *)self->token.data;
    Py_ssize_t n = 0;
    for (Py_ssize_t i = start; i < end; i++) {
        Py_UCS4 c = AT(i);
        if (c < 0x80)
            out[n++] = (unsigned char)c;
        else if (c < 0x800) {
            out[n++] = 0xC0 | c >> 6;
            out[n++] = 0x80 | (c & 0x3F);
        }
        else if (c < 0x10000) {
            out[n++] = 0xE0 | c >> 12;
            out[n++] = 0x80 | (c >> 6 & 0x3F);
            out[n++] = 0x80 | (c & 0x3F);
        }
        else {
            out[n++] = 0xF0 | c >> 18;
            out[n++] = 0x80 | (c >> 12 & 0x3F);
            out[n++] = 0x80 | (c >> 6 & 0x3F);
            out[n++] = 0x80 | (c & 0x3F);
        }
    }
    self->token.size = n;
    return 0;
}

static int
grow_slots(Numbering *self)
{
    Py_ssize_t size = (self->mask + 1) * 2;
    uint64_t *slots = PyMem_Calloc(size, sizeof(uint64_t));
    if (slots == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t s = 0; s <= self->mask; s++) {
        uint64_t slot = self->slots[s];
        if (slot == 0)
            continue;
        Record *r = RECORD(self, ((slot & 0xFFFFFFFF) - 1) * 8);
        Py_ssize_t t = token_hash(self, r->prefix, (const unsigned char *)(r + 1), r->size)
                       & (size - 1);
        while (slots[t])
            t = (t + 1) & (size - 1);
        slots[t] = slot;
    }
    PyMem_Free(self->slots);
    self->slots = slots;
    self->mask = size - 1;
    return 0;
}

/* The record of the token text[start:end] in the field prefix, added if new (a stop word, if
 * stoppable and in the stop words): its place in self->records, or -1 on error. */
static Py_ssize_t
record_of(Numbering *self, PyObject *text, Py_ssize_t prefix, Py_ssize_t start, Py_ssize_t end,
          int stoppable)
{
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    if (encode_token(self, kind, data, start, end) < 0)
        return -1;
    const char *bytes = self->token.data;
    Py_ssize_t size = self->token.size;
    uint64_t hash = token_hash(self, prefix, (const unsigned char *)bytes, size);
    Py_ssize_t s = hash & self->mask;
    for (uint64_t slot; (slot = self->slots[s]); s = (s + 1) & self->mask) {
        if ((slot ^ hash) >> 32)
            continue;
        Py_ssize_t at = ((slot & 0xFFFFFFFF) - 1) * 8;
        Record *r = RECORD(self, at);
        if (r->prefix == prefix && r->size == size && memcmp(r + 1, bytes, size) == 0)
            return at;
    }
    /* A new token: is it a stop word, and its term's number. */
    Py_ssize_t at = self->records.size;
    if (at / 8 >= 0xFFFFFFFE || size > INT32_MAX - 16) {
        PyErr_SetString(PyExc_OverflowError, "too many terms in one part");
        return -1;
    }
    PyObject *token = PyUnicode_Substring(text, start, end);
    if (token == NULL)
        return -1;
    int stop = self->stop && stoppable ? PySet_Contains(self->stop, token) : 0;
    Record record = {-1, (int32_t)prefix, (int32_t)size};
    if (stop == 0) {
        PyObject *term = prefix >= 0
            ? PyUnicode_Concat(PyList_GET_ITEM(self->prefix_strings, prefix), token)
            : Py_NewRef(token);
        PyObject *next = PyLong_FromSsize_t(PyDict_GET_SIZE(self->index));
        PyObject *found = term && next ? PyDict_SetDefault(self->index, term, next) : NULL;
        record.number = found ? PyLong_AsLongLong(found) : -1;
        Py_XDECREF(term);
        Py_XDECREF(next);
        if (found && record.number < 0 && !PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "a term's number must not be negative");
        if (PyErr_Occurred())
            stop = -1;
    }
    Py_DECREF(token);
    static const char padding[8] = {0};
    if (stop < 0 || buffer_add(&self->records, &record, sizeof(Record)) < 0 ||
            buffer_add(&self->records, self->token.data, size) < 0 ||
            buffer_add(&self->records, padding, (8 - size % 8) % 8) < 0)
        return -1;
    self->slots[s] = (hash & 0xFFFFFFFF00000000ULL) | (uint64_t)(at / 8 + 1);
    if (2 * ++self->used > self->mask && grow_slots(self) < 0)
        return -1;
    return at;
}

/* The token text[start:end] in the field prefix: its number to ids and its term's UTF-8 to
 * joined (after a NUL but for the first) if joined is not NULL, unless it is a stop word (and
 * stoppable): 1 if numbered, 0 if a stop word, -1 on error. */
static int
number_token(Numbering *self, PyObject *text, Py_ssize_t prefix, Py_ssize_t start,
             Py_ssize_t end, int stoppable, Buffer *ids, Buffer *joined)
{
    Py_ssize_t at = record_of(self, text, prefix, start, end, stoppable);
    if (at < 0)
        return -1;
    Record *r = RECORD(self, at);
    if (r->number < 0)
        return 0;
    PyObject *head = prefix >= 0 ? PyList_GET_ITEM(self->prefix_utf8, prefix) : NULL;
    if (buffer_add(ids, &r->number, sizeof(int64_t)) < 0)
        return -1;
    if (joined && ((joined->size && buffer_add(joined, "", 1) < 0) ||
                   (head && buffer_add(joined, PyBytes_AS_STRING(head),
                                       PyBytes_GET_SIZE(head)) < 0) ||
                   buffer_add(joined, r + 1, r->size) < 0))
        return -1;
    return 1;
}

/* The token text[start:end] by number_token; if it was numbered and numbers is not NULL, its
 * place is added to numbers when it has a shape. */
static int
number_word(Numbering *self, PyObject *text, Py_ssize_t prefix, Py_ssize_t start,
            Py_ssize_t end, Buffer *ids, Buffer *joined, Buffer *numbers)
{
    int kept = number_token(self, text, prefix, start, end, 1, ids, joined);
    if (kept <= 0 || numbers == NULL
            || !has_shape(PyUnicode_KIND(text), PyUnicode_DATA(text), start, end))
        return kept < 0 ? -1 : 0;
    Py_ssize_t span[2] = {start, end};
    return buffer_add(numbers, span, sizeof(span));
}

/* The tokens of text, in the field prefix (-1: the body), by number_token, those whose length
 * is not kept left out (length_kept; min_length for the body's words only); the places of
 * those with a shape to numbers, if it is not NULL. */
static int
number_tokens(Numbering *self, PyObject *text, Py_ssize_t prefix, Buffer *ids, Buffer *joined,
              Buffer *numbers)
{
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t n = PyUnicode_GET_LENGTH(text), start, end;
    Py_ssize_t min_length = prefix < 0 ? self->min_length : 1;
    Words w = {0};
    while (next_word(kind, data, n, &w, &start, &end))
        if (length_kept(kind, data, start, end, min_length, self->max_length)
                && number_word(self, text, prefix, start, end, ids, joined, numbers) < 0)
            return -1;
    return 0;
}

/* The distinct shapes of the words of text at the places in numbers (textnb.text.tokens.shapes), as
 * body tokens that no stop word removes. */
static int
number_shapes(Numbering *self, PyObject *text, const Buffer *numbers, Buffer *ids,
              Buffer *joined)
{
    const Py_ssize_t *span = (const Py_ssize_t *)numbers->data;
    Py_ssize_t count = numbers->size / (Py_ssize_t)(2 * sizeof(Py_ssize_t));
    if (count == 0)
        return 0;
    PyObject *seen = PySet_New(NULL);
    if (seen == NULL)
        return -1;
    int failed = 0;
    for (Py_ssize_t k = 0; k < count && !failed; k++) {
        PyObject *shape = shape_of(PyUnicode_KIND(text), PyUnicode_DATA(text), span[2 * k],
                                   span[2 * k + 1]);
        if (shape == NULL) {  /* it has three digits: NULL is an error */
            failed = 1;
            break;
        }
        int found = PySet_Contains(seen, shape);
        failed = found < 0 || (!found && (PySet_Add(seen, shape) < 0
                                          || number_token(self, shape, -1, 0,
                                                          PyUnicode_GET_LENGTH(shape), 0, ids,
                                                          joined) < 0));
        Py_DECREF(shape);
    }
    Py_DECREF(seen);
    return failed ? -1 : 0;
}

/* A field's number: its "name:" prefix made once a part. */
static Py_ssize_t
prefix_of(Numbering *self, PyObject *name)
{
    PyObject *found = PyDict_GetItemWithError(self->prefixes, name);
    if (found != NULL)
        return PyLong_AsSsize_t(found);
    if (PyErr_Occurred())
        return -1;
    Py_ssize_t number = PyList_GET_SIZE(self->prefix_strings);
    PyObject *string = PyUnicode_FromFormat("%U:", name);
    PyObject *utf8 = string ? PyUnicode_AsEncodedString(string, "utf-8", "replace") : NULL;
    PyObject *key = PyLong_FromSsize_t(number);
    int failed = utf8 == NULL || key == NULL || PyList_Append(self->prefix_strings, string) < 0
                 || PyList_Append(self->prefix_utf8, utf8) < 0
                 || PyDict_SetItem(self->prefixes, name, key) < 0;
    Py_XDECREF(string);
    Py_XDECREF(utf8);
    Py_XDECREF(key);
    return failed ? -1 : number;
}

static int
append_buffer(PyObject *bytearray, const Buffer *b)
{
    Py_ssize_t size = PyByteArray_GET_SIZE(bytearray);
    if (PyByteArray_Resize(bytearray, size + b->size) < 0)
        return -1;
    if (b->size)
        memcpy(PyByteArray_AS_STRING(bytearray) + size, b->data, b->size);
    return 0;
}

static PyObject *
numbering_document(Numbering *self, PyObject *args)
{
    PyObject *ids, *text, *fields, *joined, *iterator = NULL, *item, *folded;
    Buffer numbers = {NULL, 0, 0}, words = {NULL, 0, 0}, places = {NULL, 0, 0};
    PyObject *result = NULL;
    if (self->index == NULL) {
        PyErr_SetString(PyExc_TypeError, "a Numbering must be made by Numbering(...)");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "O!UOO:document", &PyByteArray_Type, &ids, &text, &fields,
                          &joined))
        return NULL;
    if (joined != Py_None && !PyByteArray_Check(joined)) {
        PyErr_SetString(PyExc_TypeError, "joined must be a bytearray or None");
        return NULL;
    }
    Buffer *into = joined == Py_None ? NULL : &words;
    folded = self->lowercase ? PyObject_CallMethod(text, "casefold", NULL) : Py_NewRef(text);
    if (folded == NULL)
        return NULL;
    int failed = number_tokens(self, folded, -1, &numbers, into, &places) < 0
                 || number_shapes(self, folded, &places, &numbers, into) < 0;
    Py_DECREF(folded);
    if (failed || (iterator = PyObject_GetIter(fields)) == NULL)
        goto done;
    while ((item = PyIter_Next(iterator)) != NULL) {
        PyObject *name, *value, *pair = PySequence_Tuple(item);  /* (name, value) */
        Py_DECREF(item);
        if (pair == NULL)
            goto done;
        Py_ssize_t prefix = -1;
        failed = !PyArg_ParseTuple(pair, "UU:field", &name, &value)
                 || (prefix = prefix_of(self, name)) < 0
                 || (folded = self->lowercase ? PyObject_CallMethod(value, "casefold", NULL)
                                              : Py_NewRef(value)) == NULL;
        if (!failed) {
            failed = number_tokens(self, folded, prefix, &numbers, into, NULL) < 0;
            Py_DECREF(folded);
        }
        Py_DECREF(pair);
        if (failed)
            goto done;
    }
    if (!PyErr_Occurred() && append_buffer(ids, &numbers) == 0 &&
            (into == NULL || append_buffer(joined, into) == 0))
        result = Py_NewRef(Py_None);
done:
    Py_XDECREF(iterator);
    PyMem_Free(numbers.data);
    PyMem_Free(words.data);
    PyMem_Free(places.data);
    return result;
}

static int
numbering_init(Numbering *self, PyObject *args, PyObject *kwds)
{
    PyObject *index, *stop;
    Py_buffer key;
    int lowercase;
    Py_ssize_t min_length, max_length;
    if (self->index != NULL || self->slots != NULL) {
        PyErr_SetString(PyExc_TypeError, "a Numbering is made once");
        return -1;
    }
    if (!PyArg_ParseTuple(args, "O!Opnny*:Numbering", &PyDict_Type, &index, &stop, &lowercase,
                          &min_length, &max_length, &key))
        return -1;
    if (key.len != 16 || check_stop(stop) < 0) {
        if (key.len != 16)
            PyErr_SetString(PyExc_ValueError, "the key must be 16 bytes");
        PyBuffer_Release(&key);
        return -1;
    }
    memcpy(&self->k0, key.buf, 8);
    memcpy(&self->k1, (char *)key.buf + 8, 8);
    PyBuffer_Release(&key);
    self->slots = PyMem_Calloc(128, sizeof(uint64_t));
    self->prefixes = PyDict_New();
    self->prefix_strings = PyList_New(0);
    self->prefix_utf8 = PyList_New(0);
    if (!self->slots || !self->prefixes || !self->prefix_strings || !self->prefix_utf8) {
        if (!PyErr_Occurred())
            PyErr_NoMemory();
        return -1;
    }
    self->mask = 127;
    self->index = Py_NewRef(index);
    self->stop = stop == Py_None || PySet_GET_SIZE(stop) == 0 ? NULL : Py_NewRef(stop);
    self->lowercase = lowercase;
    self->min_length = min_length;
    self->max_length = max_length;
    return 0;
}

static void
numbering_dealloc(Numbering *self)
{
    PyMem_Free(self->records.data);
    PyMem_Free(self->token.data);
    PyMem_Free(self->slots);
    Py_XDECREF(self->index);
    Py_XDECREF(self->stop);
    Py_XDECREF(self->prefixes);
    Py_XDECREF(self->prefix_strings);
    Py_XDECREF(self->prefix_utf8);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMethodDef numbering_methods[] = {
    {"document", (PyCFunction)numbering_document, METH_VARARGS,
     "document(ids, text, fields, joined): append to the bytearray ids the number (int64) of "
     "each token of text and then of each (name, value) field's value (prefixed 'name:'), "
     "adding new terms to the index; if joined is a bytearray, the tokens' UTF-8, NUL between."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject NumberingType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "textnb._tokens.Numbering",
    .tp_basicsize = sizeof(Numbering),
    .tp_dealloc = (destructor)numbering_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Numbering(index, stop_words, lowercase, min_length, max_length, key): documents' tokens → "
              "their numbers in the dict index (Tokenizer.document's tokens, words only, no "
              "stemming), under a 16-byte hash key.",
    .tp_methods = numbering_methods,
    .tp_init = (initproc)numbering_init,
    .tp_new = PyType_GenericNew,
};

/* textnb.documents.message's _CONTENT_TYPE and _PARAMETER on an ASCII str, whose \w is
 * [A-Za-z0-9_] and \s [ \t\n\r\f\v\x1c-\x1f]. Each pattern's repeats are followed by a character
 * they cannot take, so the regex engine's first way through is its only one: these scan it. */
static int
is_space(Py_UCS4 c)
{
    return c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f);
}

static int
is_type_char(Py_UCS4 c)  /* [\w.+-] */
{
    return c < 128 && (ascii_word[c] || c == '.' || c == '+' || c == '-');
}

static int
is_name_char(Py_UCS4 c)  /* [\w-] */
{
    return c < 128 && (ascii_word[c] || c == '-');
}

/* The end of _VALUE matched at i, or -1. */
static Py_ssize_t
mime_value(int kind, const void *data, Py_ssize_t n, Py_ssize_t i)
{
    if (i >= n)
        return -1;
    Py_UCS4 c = AT(i);
    if (c == '"') {  /* "[^"\\\n;<][^"\\\n;]*" */
        i++;
        if (i >= n || AT(i) == '"' || AT(i) == '\\' || AT(i) == '\n' || AT(i) == ';' ||
                AT(i) == '<')
            return -1;
        for (i++; i < n && AT(i) != '"' && AT(i) != '\\' && AT(i) != '\n' && AT(i) != ';'; i++)
            ;
        return i < n && AT(i) == '"' ? i + 1 : -1;
    }
    if (is_space(c) || c == ';' || c == '\\' || c == '<')  /* [^\s;"\\<][^\s;"\\]* */
        return -1;
    for (i++; i < n && !is_space(AT(i)) && AT(i) != ';' && AT(i) != '"' && AT(i) != '\\'; i++)
        ;
    return i;
}

/* content_type(value) -> (type, parameters) or None: _CONTENT_TYPE.fullmatch(value)'s two
 * groups, of an ASCII str. */
static PyObject *
content_type(PyObject *self, PyObject *args)
{
    PyObject *value;
    if (!PyArg_ParseTuple(args, "U:content_type", &value))
        return NULL;
    if (!PyUnicode_IS_ASCII(value)) {
        PyErr_SetString(PyExc_ValueError, "content_type reads ASCII only");
        return NULL;
    }
    int kind = PyUnicode_KIND(value);
    const void *data = PyUnicode_DATA(value);
    Py_ssize_t n = PyUnicode_GET_LENGTH(value), i = 0, slash, type_end, end;
    while (i < n && is_type_char(AT(i)))  /* [\w.+-]+/[\w.+-]+ */
        i++;
    if (i == 0 || i >= n || AT(i) != '/')
        Py_RETURN_NONE;
    slash = ++i;
    while (i < n && is_type_char(AT(i)))
        i++;
    if (i == slash)
        Py_RETURN_NONE;
    type_end = end = i;
    for (;;) {  /* (?:\s*;\s*[\w-]+\s*=\s*_VALUE)* */
        i = end;
        while (i < n && is_space(AT(i)))
            i++;
        if (i >= n || AT(i) != ';')
            break;
        for (i++; i < n && is_space(AT(i)); i++)
            ;
        Py_ssize_t name = i;
        while (i < n && is_name_char(AT(i)))
            i++;
        if (i == name)
            break;
        while (i < n && is_space(AT(i)))
            i++;
        if (i >= n || AT(i) != '=')
            break;
        for (i++; i < n && is_space(AT(i)); i++)
            ;
        i = mime_value(kind, data, n, i);
        if (i < 0)
            break;
        end = i;
    }
    i = end;  /* \s*(?:;\s*)? to the end */
    while (i < n && is_space(AT(i)))
        i++;
    if (i < n && AT(i) == ';')
        for (i++; i < n && is_space(AT(i)); i++)
            ;
    if (i != n)
        Py_RETURN_NONE;
    return Py_BuildValue("(NN)", PyUnicode_Substring(value, 0, type_end),
                         PyUnicode_Substring(value, type_end, end));
}

/* parameter(parameters, name) -> str or None: the value of the first of
 * _PARAMETER.findall(parameters) whose key is name in lower case (its quoted value, else its
 * token), of an ASCII str. */
static PyObject *
parameter(PyObject *self, PyObject *args)
{
    PyObject *value, *wanted;
    if (!PyArg_ParseTuple(args, "UU:parameter", &value, &wanted))
        return NULL;
    if (!PyUnicode_IS_ASCII(value) || !PyUnicode_IS_ASCII(wanted)) {
        PyErr_SetString(PyExc_ValueError, "parameter reads ASCII only");
        return NULL;
    }
    int kind = PyUnicode_KIND(value);
    const void *data = PyUnicode_DATA(value);
    const Py_UCS1 *want = PyUnicode_1BYTE_DATA(wanted);
    Py_ssize_t n = PyUnicode_GET_LENGTH(value), n_want = PyUnicode_GET_LENGTH(wanted);
    for (Py_ssize_t at = 0; at < n;) {
        Py_ssize_t i = at, name_end, start, stop;
        while (i < n && is_name_char(AT(i)))  /* ([\w-]+)\s*=\s* */
            i++;
        name_end = i;
        while (i < n && is_space(AT(i)))
            i++;
        if (name_end == at || i >= n || AT(i) != '=') {
            at++;
            continue;
        }
        for (i++; i < n && is_space(AT(i)); i++)
            ;
        if (i < n && AT(i) == '"') {  /* "([^"]*)" */
            start = i + 1;
            for (stop = start; stop < n && AT(stop) != '"'; stop++)
                ;
            if (stop >= n) {
                at++;
                continue;
            }
            i = stop + 1;
        } else {  /* ([^\s;"]+) */
            start = stop = i;
            while (stop < n && !is_space(AT(stop)) && AT(stop) != ';' && AT(stop) != '"')
                stop++;
            if (stop == start) {
                at++;
                continue;
            }
            i = stop;
        }
        int same = name_end - at == n_want;
        for (Py_ssize_t k = 0; same && k < n_want; k++)
            same = Py_TOLOWER(AT(at + k)) == want[k];
        if (same)
            return PyUnicode_Substring(value, start, stop);
        at = i;
    }
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"tokens", tokens, METH_VARARGS,
     "tokens(text, stop_words, min_length, max_length) -> list: the tokens of text "
     "(_TOKEN.findall), those in the set stop_words (or None), longer than max_length or "
     "words shorter than min_length (but a CJK character) left out."},
    {"field_tokens", field_tokens, METH_VARARGS,
     "field_tokens(tokens, fields, stop_words, lowercase, max_length): append to the list "
     "tokens each (name, value) field's tokens, case-folded if lowercase, prefixed 'name:'."},
    {"number", number, METH_VARARGS,
     "number(index, terms, add) -> bytes: each term's number in the dict index, as native "
     "int64; a term not in it -1, or, if add, numbered len(index) and added."},
    {"count", count, METH_VARARGS,
     "count(ids, ends, order) -> (data, indices, indptr): bytearrays of float64, int32 and "
     "int64, CSR counts of each document's term numbers ids[ends[d-1]:ends[d]] (int64), "
     "columns in the order of order (each term's number, int64)."},
    {"received", received, METH_VARARGS,
     "received(value) -> (ips, hosts): of a lower-case Received field, each IPv4 address's "
     "prefixes 'a.b a.b.c a.b.c.d', and its distinct host names then their registered "
     "domains, as textnb.documents.envelope reads them."},
    {"envelope", envelope, METH_VARARGS,
     "envelope(headers, read, address_fields, value_fields, max_fields, max_value) -> list or "
     "None: textnb.documents.envelope.envelope_fields of the first max_fields (name, value) pairs, each "
     "value cut to max_value characters; None where a value read is not ASCII."},
    {"shapes", shapes, METH_VARARGS,
     "shapes(words) -> list: the distinct shapes, in their first order, of the words of three "
     "decimal digits or more, each digit '#' (textnb.text.tokens.shapes)."},
    {"is_message", is_message, METH_VARARGS,
     "is_message(raw, known, sniff) -> bool: whether the first sniff bytes of raw start with "
     "a header block naming a field in known, as textnb.documents.message._is_message reads it."},
    {"header_fields", header_fields, METH_VARARGS,
     "header_fields(text) -> [(name, value)] or None: an ASCII header block's fields, as "
     "textnb.documents.message._header_block splits it."},
    {"content_type", content_type, METH_VARARGS,
     "content_type(value) -> (type, parameters) or None: the groups of "
     "textnb.documents.message._CONTENT_TYPE.fullmatch(value), of an ASCII str."},
    {"parameter", parameter, METH_VARARGS,
     "parameter(parameters, name) -> str or None: the value of the first parameter named name "
     "(lower case) of _PARAMETER.findall(parameters), of an ASCII str."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_tokens", NULL, -1, methods,
                                    NULL, NULL, NULL, NULL};

PyMODINIT_FUNC
PyInit__tokens(void)
{
    for (int c = 0; c < 128; c++)
        ascii_word[c] = Py_UNICODE_ISALNUM(c) || c == '_';
    if (PyType_Ready(&NumberingType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m != NULL && PyModule_AddObject(m, "Numbering", Py_NewRef((PyObject *)&NumberingType)) < 0) {
        Py_DECREF(&NumberingType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
