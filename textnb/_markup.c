/* HTML's scan, in C: html → the lines of its text, its tag names and the attributes that may
 * hold links (textnb.documents.html.html_text).
 *
 * The Python code is the definition, and the fallback where this module is not built. This
 * loop follows its patterns branch by branch: _MARKUP's leftmost match (a comment's "<!--", a
 * start or end tag with its attributes, or "<!", "<?", "</" up to ">"), a comment's end
 * "--!?>", and "</script\s*>" or "</style\s*>" ignoring case as Python's re does (where "ſ"
 * is an "s" and "İ" and "ı" are an "i"); \s is a character for which str.isspace() is true,
 * as for str.split(). tests/test_markup.py checks that both give the same results. Python
 * spent some 60 ns a character of HTML here; what is left to it are links that are not plain
 * (textnb.documents.html._PLAIN_URL) and the character references.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#define AT(i) PyUnicode_READ(kind, data, (i))
#define SPACE(c) Py_UNICODE_ISSPACE(c)
#define ALPHA(c) (((c) >= 'a' && (c) <= 'z') || ((c) >= 'A' && (c) <= 'Z'))

/* The lower-case ASCII letter c stands for under re.IGNORECASE, or 0. */
static Py_UCS4
folded(Py_UCS4 c)
{
    if (c >= 'A' && c <= 'Z')
        return c + 32;
    if (c < 128)
        return c;
    if (c == 0x17f)
        return 's';
    if (c == 0x130 || c == 0x131)
        return 'i';
    return 0;
}

/* The end of the first "</name\s*>" (ignoring case) at or after i, or -1. */
static Py_ssize_t
hidden_end(int kind, const void *data, Py_ssize_t n, Py_ssize_t i, const char *name)
{
    size_t length = strlen(name);
    for (; i + 1 < n; i++) {
        if (AT(i) != '<' || AT(i + 1) != '/')
            continue;
        Py_ssize_t j = i + 2;
        size_t k = 0;
        while (k < length && j < n && folded(AT(j)) == (Py_UCS4)name[k])
            j++, k++;
        if (k < length)
            continue;
        while (j < n && SPACE(AT(j)))
            j++;
        if (j < n && AT(j) == '>')
            return j + 1;
    }
    return -1;
}

/* html[start:stop].lower(): made directly where it is ASCII (a tag's name nearly always is),
 * by str.lower() otherwise. */
static PyObject *
lowered(PyObject *html, int kind, const void *data, Py_ssize_t start, Py_ssize_t stop)
{
    PyObject *name = PyUnicode_New(stop - start, 127);
    if (!name)
        return NULL;
    Py_UCS1 *out = PyUnicode_1BYTE_DATA(name);
    for (Py_ssize_t i = start; i < stop; i++) {
        Py_UCS4 c = AT(i);
        if (c >= 128) {
            Py_DECREF(name);
            PyObject *text = PyUnicode_Substring(html, start, stop);
            PyObject *lower = text ? PyObject_CallMethod(text, "lower", NULL) : NULL;
            Py_XDECREF(text);
            return lower;
        }
        out[i - start] = (Py_UCS1)(c >= 'A' && c <= 'Z' ? c + 32 : c);
    }
    return name;
}

/* A growing line of text, whitespace collapsed as " ".join(text.split()) does, its characters
 * of the HTML's own kind (a line's are the HTML's, or a space). */
typedef struct {
    void *chars;
    int kind;
    Py_ssize_t length;
    int space;  /* whitespace seen since the last character kept */
} Line;

static void
add(Line *line, int kind, const void *data, Py_ssize_t start, Py_ssize_t stop)
{
    for (Py_ssize_t i = start; i < stop; i++) {
        Py_UCS4 c = AT(i);
        if (SPACE(c)) {
            line->space = 1;
            continue;
        }
        if (line->space && line->length)
            PyUnicode_WRITE(line->kind, line->chars, line->length++, ' ');
        line->space = 0;
        PyUnicode_WRITE(line->kind, line->chars, line->length++, c);
    }
}

/* End the line: its text joins lines if there is any. 0 on success, -1 on error. */
static int
flush(Line *line, PyObject *lines)
{
    int result = 0;
    if (line->length) {
        PyObject *text = PyUnicode_FromKindAndData(line->kind, line->chars, line->length);
        result = text ? PyList_Append(lines, text) : -1;
        Py_XDECREF(text);
    }
    line->length = 0;
    line->space = 0;
    return result;
}

/* Whether html[start:stop] holds "=" and "href" or "src" in any case: c | 32 is a lower-case
 * ASCII letter only for that letter and its capital, and no other character lowers to one of
 * these letters. */
static int
may_link(int kind, const void *data, Py_ssize_t start, Py_ssize_t stop)
{
    int equals = 0, found = 0;
    for (Py_ssize_t i = start; i < stop; i++) {
        Py_UCS4 c = AT(i);
        equals |= c == '=';
        if (!found && i + 3 <= stop && (c | 32) == 's'
                && (AT(i + 1) | 32) == 'r' && (AT(i + 2) | 32) == 'c')
            found = 1;
        if (!found && i + 4 <= stop && (c | 32) == 'h' && (AT(i + 1) | 32) == 'r'
                && (AT(i + 2) | 32) == 'e' && (AT(i + 3) | 32) == 'f')
            found = 1;
    }
    return equals && found;
}

/* The end of a link at q, (?:href|src)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+)) ignoring case
 * (textnb.documents.html._LINK, ASCII text), its value in [*start, *stop); or -1. */
static Py_ssize_t
link_at(int kind, const void *data, Py_ssize_t q, Py_ssize_t b, Py_ssize_t *start,
        Py_ssize_t *stop)
{
    Py_ssize_t j = q;
    if (j + 4 <= b && (AT(j) | 32) == 'h' && (AT(j + 1) | 32) == 'r' && (AT(j + 2) | 32) == 'e'
            && (AT(j + 3) | 32) == 'f')
        j += 4;
    else if (j + 3 <= b && (AT(j) | 32) == 's' && (AT(j + 1) | 32) == 'r'
             && (AT(j + 2) | 32) == 'c')
        j += 3;
    else
        return -1;
    while (j < b && SPACE(AT(j)))
        j++;
    if (j >= b || AT(j) != '=')
        return -1;
    for (j++; j < b && SPACE(AT(j)); j++)
        ;
    if (j >= b)
        return -1;
    Py_UCS4 quote = AT(j);
    Py_ssize_t k = j + (quote == '"' || quote == '\'');
    if (k > j) {  /* quoted: to the closing quote, or no link */
        while (k < b && AT(k) != quote)
            k++;
        if (k >= b)
            return -1;
        *start = j + 1;
        *stop = k;
        return k + 1;
    }
    while (k < b && !SPACE(AT(k)) && AT(k) != '"' && AT(k) != '\'' && AT(k) != '>')
        k++;
    *start = j;
    *stop = k;
    return k > j ? k : -1;
}

/* Whether the link html[start:stop] (ASCII) has no host for _host, without urlsplit: no "&"
 * (a reference html.unescape would decode) and no "//" once tabs and line ends are dropped, as
 * urlsplit drops them (mailto:, a path, an anchor: nearly all links that are not plain). */
static int
no_host(int kind, const void *data, Py_ssize_t start, Py_ssize_t stop)
{
    Py_UCS4 last = 0;
    for (Py_ssize_t j = start; j < stop; j++) {
        Py_UCS4 c = AT(j);
        if (c == '&' || (c == '/' && last == '/'))
            return 0;
        if (c != '\t' && c != '\r' && c != '\n')
            last = c;
    }
    return 1;
}

/* Add the hosts of the links in html[a:b], a tag's attributes, to the dict hosts, as
 * textnb.documents.html._links adds them: here where the attributes are ASCII and each link is
 * scheme://host then a path, query, fragment or its end (_PLAIN_URL), as nearly all are (no
 * "&" can come before that end, so html.unescape leaves what is read as it is), or has no host
 * (no_host); else by python(attributes, hosts). 0, or -1 on error. */
#define MAX_LINKS 16
static int
link_hosts(PyObject *html, int kind, const void *data, Py_ssize_t a, Py_ssize_t b,
           PyObject *hosts, PyObject *python)
{
    Py_ssize_t host[2 * MAX_LINKS], start, stop, m = 0;
    for (Py_ssize_t p = a; p < b; p++)
        if (AT(p) >= 128)
            goto in_python;
    for (Py_ssize_t p = a; p < b;) {
        Py_ssize_t end = p == a ? link_at(kind, data, p, b, &start, &stop) : -1;
        Py_UCS4 c = AT(p);
        if (end < 0 && (SPACE(c) || c == '"' || c == '\'' || c == '/'))
            end = link_at(kind, data, p + 1, b, &start, &stop);
        if (end < 0) {
            p++;
            continue;
        }
        p = end;
        while (start < stop && SPACE(AT(start)))
            start++;
        while (stop > start && SPACE(AT(stop - 1)))
            stop--;
        if (start == stop)
            continue;  /* an empty link: no host */
        Py_ssize_t j = start;
        if (!ALPHA(AT(j)))
            goto not_plain;
        while (j < stop && (ALPHA(AT(j)) || Py_ISDIGIT(AT(j)) || AT(j) == '+' || AT(j) == '.'
                            || AT(j) == '-'))
            j++;
        if (j + 3 > stop || AT(j) != ':' || AT(j + 1) != '/' || AT(j + 2) != '/')
            goto not_plain;
        Py_ssize_t first = j += 3;
        while (j < stop && (ALPHA(AT(j)) || Py_ISDIGIT(AT(j)) || AT(j) == '.' || AT(j) == '-'))
            j++;
        if (j < stop && AT(j) != '/' && AT(j) != '?' && AT(j) != '#')
            goto not_plain;
        if (j == first)
            continue;  /* no host */
        if (m == MAX_LINKS)
            goto in_python;
        host[2 * m] = first;
        host[2 * m++ + 1] = j;
        continue;
not_plain:
        if (no_host(kind, data, start, stop))
            continue;  /* mailto:, a path, an anchor: _host's "" */
        goto in_python;
    }
    for (Py_ssize_t k = 0; k < m; k++) {
        PyObject *name = lowered(html, kind, data, host[2 * k], host[2 * k + 1]);
        int failed = name == NULL || PyDict_SetItem(hosts, name, Py_None) < 0;
        Py_XDECREF(name);
        if (failed)
            return -1;
    }
    return 0;
in_python:;
    PyObject *text = PyUnicode_Substring(html, a, b);
    PyObject *done = text ? PyObject_CallFunctionObjArgs(python, text, hosts, NULL) : NULL;
    Py_XDECREF(text);
    Py_XDECREF(done);
    return done ? 0 : -1;
}

static PyObject *
html_lines(PyObject *self, PyObject *args)
{
    PyObject *html, *block_tags, *tags, *hosts, *python;
    if (!PyArg_ParseTuple(args, "UO!O!O!O", &html, &PyFrozenSet_Type, &block_tags,
                          &PyDict_Type, &tags, &PyDict_Type, &hosts, &python))
        return NULL;
    int kind = PyUnicode_KIND(html);
    const void *data = PyUnicode_DATA(html);
    Py_ssize_t n = PyUnicode_GET_LENGTH(html), pos = 0;
    Line line = {PyMem_Malloc((size_t)kind * (n + 1)), kind, 0, 0};
    PyObject *lines = PyList_New(0);
    if (!line.chars || !lines)
        goto fail;
    int comments_close = 1;
    for (Py_ssize_t i = pos; i < n; i++) {
        if (AT(i) != '<' || i + 1 >= n)
            continue;
        Py_UCS4 next = AT(i + 1);
        if (next == '!' && i + 3 < n && AT(i + 2) == '-' && AT(i + 3) == '-') {
            add(&line, kind, data, pos, i);
            pos = i + 4;
            Py_ssize_t close = -1;
            for (Py_ssize_t j = pos; comments_close && j + 2 < n; j++) {
                if (AT(j) == '-' && AT(j + 1) == '-') {
                    if (AT(j + 2) == '>') { close = j + 3; break; }
                    if (AT(j + 2) == '!' && j + 3 < n && AT(j + 3) == '>') { close = j + 4; break; }
                }
            }
            if (close < 0) {
                comments_close = 0;
                while (pos < n && AT(pos) != '>')
                    pos++;
                close = pos < n ? pos + 1 : n;
            }
            pos = close;
            i = pos - 1;
            continue;
        }
        Py_ssize_t j = i + 1;
        int end = next == '/' && i + 2 < n && ALPHA(AT(i + 2));
        j += end;
        if (!ALPHA(AT(j))) {
            if (next != '!' && next != '?' && next != '/')
                continue;  /* no markup starts here */
            add(&line, kind, data, pos, i);
            for (j = i + 2; j < n && AT(j) != '>'; j++)
                ;
            pos = j < n ? j + 1 : n;
            i = pos - 1;
            continue;
        }
        /* A start or end tag: its name, then its attributes. */
        add(&line, kind, data, pos, i);
        Py_ssize_t name_start = j;
        while (j < n && !SPACE(AT(j)) && AT(j) != '/' && AT(j) != '>')
            j++;
        Py_ssize_t name_stop = j, attrs = j;
        while (j < n && AT(j) != '>' && AT(j) != '=')
            j++;
        while (j < n && AT(j) == '=') {
            j++;
            while (j < n && SPACE(AT(j)))
                j++;
            Py_UCS4 q = j < n ? AT(j) : 0;
            int bare = 1;
            if (q == '"' || q == '\'') {
                /* To the closing quote, wherever it is; without one, a bare value. (A failed
                 * search runs to the end, but only the last quote of a kind can fail.) */
                Py_ssize_t k = j + 1;
                while (k < n && AT(k) != q)
                    k++;
                if (k < n) {
                    j = k + 1;
                    bare = 0;
                }
            }
            if (bare)
                while (j < n && !SPACE(AT(j)) && AT(j) != '>')
                    j++;
            while (j < n && AT(j) != '>' && AT(j) != '=')
                j++;
        }
        Py_ssize_t attrs_stop = j;
        pos = j < n && AT(j) == '>' ? j + 1 : j;
        i = pos - 1;
        PyObject *lower = lowered(html, kind, data, name_start, name_stop);
        if (!lower)
            goto fail;
        int block = PySet_Contains(block_tags, lower);
        if (block < 0 || (block && flush(&line, lines) < 0)) {
            Py_DECREF(lower);
            goto fail;
        }
        if (end) {
            Py_DECREF(lower);
            continue;
        }
        int failed = PyDict_SetItem(tags, lower, Py_None) < 0;
        if (!failed && may_link(kind, data, attrs, attrs_stop))
            failed = link_hosts(html, kind, data, attrs, attrs_stop, hosts, python) < 0;
        const char *hidden = PyUnicode_CompareWithASCIIString(lower, "script") == 0 ? "script"
                             : PyUnicode_CompareWithASCIIString(lower, "style") == 0 ? "style"
                             : NULL;
        Py_DECREF(lower);
        if (failed)
            goto fail;
        if (hidden) {
            Py_ssize_t close = hidden_end(kind, data, n, pos, hidden);
            pos = close >= 0 ? close : n;
            i = pos - 1;
        }
    }
    add(&line, kind, data, pos, n);
    if (flush(&line, lines) < 0)
        goto fail;
    PyMem_Free(line.chars);
    return lines;
fail:
    PyMem_Free(line.chars);
    Py_XDECREF(lines);
    return NULL;
}

static PyMethodDef methods[] = {
    {"html_lines", html_lines, METH_VARARGS,
     "html_lines(html, block_tags, tags, hosts, links) -> list: the lines of html's text "
     "(whitespace collapsed, character references not decoded), as textnb.documents.html.html_text "
     "makes them; each start tag's lower-case name is added to the dict tags, and the hosts "
     "of its links to the dict hosts, by links(attributes, hosts) where they are not plain."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_markup", NULL, -1, methods,
                                    NULL, NULL, NULL, NULL};

PyMODINIT_FUNC
PyInit__markup(void)
{
    return PyModule_Create(&module);
}
