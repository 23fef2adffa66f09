/* Compiled hot paths of streameval.
 *
 * Each has a pure Python/numpy twin that gives identical results
 * (streameval/_events.py and the numpy path of BinaryAccumulator._ingest):
 *
 *   count_range_free, count_uniform, count_edges
 *                     count an unweighted batch of scores into the paged
 *                     counts of one binning scheme in one pass: the labelled
 *                     code of every score, its page (given a row when new),
 *                     its slot. They refuse a NaN score or a label other than
 *                     0 and 1, and the caller takes back what was counted.
 *   count_exact, compact_exact, fill_exact, rehash_exact, merge_exact, sort_exact, combine_exact
 *                     the exact regime: every distinct score with its counts
 *                     in a hash table, grown by rehashing (the twin keeps
 *                     sorted arrays), a
 *                     batch merged into the sorted scores of a report, or the
 *                     table's scores radix-sorted for a report.
 *   calibration_sums  the Brier and log-loss sums of a batch (exact whole units
 *                     without weights).
 *   calibration_spread, calibration_exact
 *                     the calibration curve's bins of binned scores (each
 *                     bin's scores spread evenly over it), and of distinct
 *                     scores.
 *   run_order, layout_cells, gather_bins
 *                     a report's read of a table: its slots in order from its
 *                     rows' sorted runs (else numpy's argsort), each stored
 *                     slot's (bin, label) once per set of pages, then every
 *                     count summed into its bin (the twin gathers with numpy);
 *                     the bins holding a count compacted with AVX-512's
 *                     compress where the processor has it (compress_paths
 *                     switches it off, for tests of the plain loop).
 *   rate_crossing     where FRR - FAR crosses 0 along a curve's points, and
 *                     where it is nearest 0 (the equal error rates).
 *   time_order        whether a batch's event times are finite and ascending.
 *   row_argmax        the predicted class of each row of class scores (ties to
 *                     the class first in a given order).
 *   score_columns     a block of rows of class scores written class by class.
 *   count_columns     every class's scores of a matrix counted into its own
 *                     table, 64 classes a pass, a block of rows at a time
 *                     written class by class into a buffer that stays in
 *                     cache (the twin counts each column apart).
 *   dict_rows         a list of dicts of class scores read into a matrix
 *                     (plain float scores of exactly the classes).
 *   object_codes      a list of str and int segments coded in order of first
 *                     appearance through a dict.
 *   lower_hull        the lower convex hull of a curve's points (the ROC
 *                     convex hull), in the same passes as its numpy twin.
 *   operating_points, auc_sums, ap_bins, ap_terms, pr_auc_terms
 *                     a report's curve metrics: the points of the curves, the
 *                     AUC's exact sums, average precision's and the PR curve
 *                     area's terms (numpy's log1p between two passes).
 *   small_codes, group_by_code
 *                     the segments of a batch: codes of small integers in order
 *                     of first appearance, and columns grouped by those codes.
 *   group_lookup, count_grouped_range_free
 *                     a batch of segments that exist counted in place: a table
 *                     from small integers to segments, then count_range_free
 *                     and calibration_sums in one pass, each event's segment
 *                     chosen through it (the twin groups the events, then
 *                     counts each segment's apart).
 *   EventBuffer       the base of BinaryAccumulator: update(y, score) checks
 *                     and stores one event in C and hands a full buffer to the
 *                     accumulator's _flush(); anything unusual (weights, bad
 *                     input, other label or score types) goes to the Python
 *                     method _update_slow, which explains or handles it.
 *   FloatEvents       the per-event buffer of ScoreAccumulator and
 *                     RegressionAccumulator: update(*values, w=1.0) stores
 *                     finite floats and weights, and hands anything else to
 *                     the accumulator's checked path.
 *   ClassRows         the per-event buffer of MulticlassAccumulator:
 *                     update(y, {class: score}) stores a known class and a
 *                     dict of float scores of exactly the known classes; the
 *                     predicted class is found when the buffer is counted.
 *                     update(y, predicted) of two known classes is stored
 *                     as it is; either with a float weight (w=, or third).
 *   EventLog          the per-event log of a sliding window: counts an event
 *                     with the accumulator's update, then keeps it in typed
 *                     columns (floats, ints, bools, str and, for a window,
 *                     dicts) until the window files it.
 *   PaneRouter        the per-event path of a time window: an event of the
 *                     latest pane (with or without w=) goes straight to that
 *                     pane's update.
 *   DecayRouter       the per-event path of a window decayed by time: an
 *                     event at a float or int time with a float or int weight
 *                     goes straight to the state's update with its decayed
 *                     weight, and the router keeps the window's clock.
 *   SegmentRouter     the per-event path of a segmented accumulator: an event
 *                     of a segment named by a str or an int goes straight to
 *                     that segment's update.
 *   EventCounter      the per-event path of a monitor by events: the
 *                     accumulator's update (a compiled one called through
 *                     its C function), then a record when one is due.
 *   CellTally         the per-event path of a paired accumulator: a plain
 *                     unit-weight event counted in place in its cell of the
 *                     2 x 2 x 2 table of whole counts.
 *
 * The module uses only the CPython API and the buffer protocol (no numpy
 * headers), so it builds with any C compiler; when it does not build, the
 * package runs on its Python twins.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <stdint.h>
#include <string.h>
#include <math.h>
#include <float.h>

#define PAGE_BITS 7
#define PAGE_MASK ((1u << PAGE_BITS) - 1u)
#define CAPACITY 4096 /* per-event updates counted per flush; equals FLUSH_EVERY */
/* A weight above this takes the checked path, which counts it at once against the total (LARGE_WEIGHT in
 * _events.py): a buffer of CAPACITY smaller ones holds less than 1e294, so its flush cannot overflow a total. */
#define LARGE_WEIGHT 1e290
/* A value of a float column beyond this takes the checked path too, which counts it at once and refuses it when
 * the moments or sums would overflow (LARGE_VALUE in _events.py): CAPACITY smaller ones square to less than
 * 1e304. */
#define LARGE_VALUE 1e150

/* ------------------------------------------------------------------------ */
/* Batch kernel                                                              */
/* ------------------------------------------------------------------------ */

/* Scores are coded a chunk at a time (a loop the compiler vectorises, with
 * AVX2 and AVX-512 clones on x86-64 Linux), then counted one by one. The
 * clones matter: built without them, update_many on 10^7 scores ran at
 * 0.47-0.56 of bincount's throughput on a 2-core x86-64 machine, against
 * 0.72-0.86 with the AVX2 one; the AVX-512 one (GCC 12 and later) took the
 * counting of 10^7 scores from 11.3 to 9.8 ms and the calibration sums from
 * 22 to 13 ms. */
#define CHUNK 256

#if defined(__GNUC__) && defined(__x86_64__) && defined(__linux__) && defined(__has_attribute)
#if __has_attribute(target_clones)
#if !defined(__clang__) && __GNUC__ >= 12
#define VECTOR_CLONES __attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
#else
#define VECTOR_CLONES __attribute__((target_clones("avx2", "default")))
#endif
#endif
#endif
#ifndef VECTOR_CLONES
#define VECTOR_CLONES
#endif

/* Labelled codes of x[0:m] into out; nonzero when some x is NaN.
 *
 * Same arithmetic as RangeFreeBins._labelled_codes: t = s - (s >= 0.5) (the
 * 1.0 is built from a mask, which keeps the loop branch-free), -0.0 made 0.0
 * by adding 0.0, the bits of t less one when t is negative, taken as unsigned
 * and shifted; then the label and region bits on top. */
VECTOR_CLONES static int
codes_chunk(const double *restrict x, const uint8_t *restrict labels, Py_ssize_t m, int shift, int tag_shift,
            uint64_t *restrict out)
{
    uint64_t nan = 0;
    for (Py_ssize_t j = 0; j < m; j++) {
        double s = x[j];
        uint64_t up = s >= 0.5;
        uint64_t one_bits = (0 - up) & UINT64_C(0x3FF0000000000000);
        double one;
        memcpy(&one, &one_bits, sizeof one);
        double t = (s - one) + 0.0;
        uint64_t raw;
        memcpy(&raw, &t, sizeof raw);
        uint64_t v = raw - (raw >> 63);
        out[j] = (v >> shift) + ((((uint64_t)labels[j] << 1) | up) << tag_shift);
        nan |= s != s;
    }
    return nan != 0;
}

PyDoc_STRVAR(labelled_code_doc,
"labelled_code(score, is_pos, shift, tag_shift) -> int\n\n"
"The range-free labelled code of one score (a float, not NaN) with its label: codes_chunk's operations on one\n"
"event (RangeFreeBins.labelled_code, compiled).");

static PyObject *
labelled_code(PyObject *Py_UNUSED(module), PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "labelled_code(score, is_pos, shift, tag_shift)");
        return NULL;
    }
    double x = PyFloat_AsDouble(args[0]);
    if (x == -1.0 && PyErr_Occurred())
        return NULL;
    int is_pos = PyObject_IsTrue(args[1]);
    long shift = PyLong_AsLong(args[2]), tag_shift = PyLong_AsLong(args[3]);
    if (is_pos < 0 || ((shift == -1 || tag_shift == -1) && PyErr_Occurred()))
        return NULL;
    if (x != x || shift < 8 || shift > 63 || tag_shift != 64 - shift) {
        PyErr_SetString(PyExc_ValueError, "labelled_code: a NaN score or inconsistent arguments");
        return NULL;
    }
    uint8_t label = (uint8_t)is_pos;
    uint64_t code;
    codes_chunk(&x, &label, 1, (int)shift, (int)tag_shift, &code);
    return PyLong_FromUnsignedLongLong(code);
}

/* Labels of one chunk as 0/1 bytes from unsigned integers of `width` bytes
 * (bool and signed arrays are read as unsigned: -1 is then large); nonzero
 * when some label is neither 0 nor 1. */
#define LABELS_AS(TYPE)                                  \
    {                                                    \
        const TYPE *v = (const TYPE *)src;               \
        for (Py_ssize_t j = 0; j < m; j++) {             \
            bad |= (uint64_t)(v[j] > 1);                 \
            out[j] = (uint8_t)(v[j] & 1);                \
        }                                                \
    }

static int
labels_chunk(const void *src, int width, Py_ssize_t m, uint8_t *restrict out)
{
    uint64_t bad = 0;
    switch (width) {
    case 1:
        LABELS_AS(uint8_t)
        break;
    case 2:
        LABELS_AS(uint16_t)
        break;
    case 4:
        LABELS_AS(uint32_t)
        break;
    default:
        LABELS_AS(uint64_t)
        break;
    }
    return bad != 0;
}

/* Count codes[0:m] (of scores x[0:m]); returns how many were counted. A page
 * with no storage gets the next free row while rows remain; the count stops
 * before the first code that finds none. A slot outside the table sets *bad. */
typedef struct {
    int32_t *base;           /* offset of each page's row in counts, or negative */
    int64_t *page_of_row;    /* page of each stored row */
    Py_ssize_t n_stored;     /* rows in use */
    Py_ssize_t capacity;     /* rows available */
    void *counts;
    void *shadow;            /* same layout as counts, or NULL (for small batches) */
    uint64_t n_slots;
    int counts_float, sign, check_threshold, bad;
    int counts_u32;          /* counts is a uint32 scratch of the same slots (count_columns; sign 1 only) */
    unsigned long long t_neg, t_pos;
    double threshold;
    long long above[2];
    uint8_t *hits;           /* weighted: 1 for each event at a threshold code (when check_threshold) */
} Table;

#define THRESHOLD_HIT(CODE, X)                                                         \
    if ((CODE) == tb->t_neg || (CODE) == tb->t_pos) {                                  \
        if ((X) >= tb->threshold)                                                      \
            tb->above[(CODE) == tb->t_pos] += tb->sign;                                \
    }

/* Events in pairs, the second of each pair into the shadow table, so that two
 * events in one slot do not wait for each other; stops (for the loop below) at
 * a pair that needs a new row. */
#define COUNT_PAIRS(CTYPE, CHECK)                                                      \
    for (; j + 1 < m; j += 2) {                                                        \
        uint64_t ca = codes[j], cb = codes[j + 1];                                     \
        int32_t ba = tb->base[ca >> PAGE_BITS], bb = tb->base[cb >> PAGE_BITS];        \
        if ((ba | bb) < 0 || (uint64_t)ba + PAGE_MASK >= tb->n_slots ||                \
            (uint64_t)bb + PAGE_MASK >= tb->n_slots)                                   \
            break;                                                                     \
        ((CTYPE *)tb->counts)[ba + (ca & PAGE_MASK)] += (CTYPE)tb->sign;               \
        ((CTYPE *)tb->shadow)[bb + (cb & PAGE_MASK)] += (CTYPE)tb->sign;               \
        if (CHECK) {                                                                   \
            THRESHOLD_HIT(ca, xs[j])                                                   \
            THRESHOLD_HIT(cb, xs[j + 1])                                               \
        }                                                                              \
    }

#define COUNT_ONE_BY_ONE(CTYPE, CHECK)                                                 \
    for (; j < m; j++) {                                                               \
        uint64_t code = codes[j];                                                      \
        int32_t b = tb->base[code >> PAGE_BITS];                                       \
        if (b < 0) {                                                                   \
            if (tb->n_stored >= tb->capacity)                                          \
                break;                                                                 \
            b = (int32_t)(tb->n_stored << PAGE_BITS);                                  \
            tb->base[code >> PAGE_BITS] = b;                                           \
            tb->page_of_row[tb->n_stored++] = (int64_t)(code >> PAGE_BITS);            \
        }                                                                              \
        if ((uint64_t)b + PAGE_MASK >= tb->n_slots) {                                  \
            tb->bad = 1;                                                               \
            break;                                                                     \
        }                                                                              \
        ((CTYPE *)tb->counts)[b + (code & PAGE_MASK)] += (CTYPE)tb->sign;              \
        if (CHECK) {                                                                   \
            THRESHOLD_HIT(code, xs[j])                                                 \
        }                                                                              \
    }

#define COUNT_CHUNK(CTYPE, CHECK)                                                      \
    if (tb->shadow != NULL) {                                                          \
        COUNT_PAIRS(CTYPE, CHECK)                                                      \
    }                                                                                  \
    COUNT_ONE_BY_ONE(CTYPE, CHECK)

static Py_ssize_t
count_chunk(Table *tb, const uint64_t *codes, const double *xs, Py_ssize_t m)
{
    Py_ssize_t j = 0;
    if (tb->counts_u32) {
        if (tb->check_threshold) {
            COUNT_ONE_BY_ONE(uint32_t, 1)
        } else {
            COUNT_ONE_BY_ONE(uint32_t, 0)
        }
    } else if (tb->counts_float) {
        if (tb->check_threshold) {
            COUNT_CHUNK(double, 1)
        } else {
            COUNT_CHUNK(double, 0)
        }
    } else {
        if (tb->check_threshold) {
            COUNT_CHUNK(int64_t, 1)
        } else {
            COUNT_CHUNK(int64_t, 0)
        }
    }
    return j;
}

/* Add the shadow table into the counts (exact: both hold sums of +-1). */
static void
fold_shadow(Table *tb)
{
    Py_ssize_t size = tb->n_stored << PAGE_BITS;
    if (tb->counts_float) {
        double *c = tb->counts, *h = tb->shadow;
        for (Py_ssize_t k = 0; k < size; k++)
            c[k] += h[k];
    } else {
        int64_t *c = tb->counts, *h = tb->shadow;
        for (Py_ssize_t k = 0; k < size; k++)
            c[k] += h[k];
    }
}

/* Weighted events: add each weight to the pending tally `counts` (float64) in
 * event order, as numpy's bincount does, and mark the events at a threshold
 * code; nothing is taken back out here (the caller applies the tally). */
static Py_ssize_t
count_weighted_chunk(Table *tb, const uint64_t *codes, const double *w, uint8_t *hits, Py_ssize_t m)
{
    double *part = tb->counts;
    Py_ssize_t j;
    for (j = 0; j < m; j++) {
        uint64_t code = codes[j];
        int32_t b = tb->base[code >> PAGE_BITS];
        if (b < 0) {
            if (tb->n_stored >= tb->capacity)
                break;
            b = (int32_t)(tb->n_stored << PAGE_BITS);
            tb->base[code >> PAGE_BITS] = b;
            tb->page_of_row[tb->n_stored++] = (int64_t)(code >> PAGE_BITS);
        }
        if ((uint64_t)b + PAGE_MASK >= tb->n_slots) {
            tb->bad = 1;
            break;
        }
        part[b + (code & PAGE_MASK)] += w[j];
        if (tb->check_threshold && (code == tb->t_neg || code == tb->t_pos))
            hits[j] = 1;
    }
    return j;
}

/* End of a block: add its sums into the running tally and start the next from zero. */
static void
fold_block(Table *tb, double *tally)
{
    double *part = tb->counts;
    Py_ssize_t size = tb->n_stored << PAGE_BITS;
    for (Py_ssize_t k = 0; k < size; k++) {
        tally[k] += part[k];
        part[k] = 0.0;
    }
}

/* Codes of the fixed-bin schemes: the key plus n_codes for a positive. */
typedef struct {
    double lo, scale;     /* uniform: key guess (x - lo) * scale + 1, then checked */
    Py_ssize_t n;         /* uniform: number of equal bins */
    const double *lower;  /* uniform: n + 2 lower edges (-inf first) */
    const double *upper;  /* uniform: n + 2 upper edges (nan last) */
    const double *edges;  /* edges: strictly increasing, finite */
    Py_ssize_t n_edges;
    uint64_t n_codes;
    int shift, tag_shift; /* range-free */
} Coding;

typedef int (*coder)(const Coding *c, const double *x, const uint8_t *labels, Py_ssize_t m, uint64_t *out);

static int
code_range_free(const Coding *c, const double *x, const uint8_t *labels, Py_ssize_t m, uint64_t *out)
{
    return codes_chunk(x, labels, m, c->shift, c->tag_shift, out);
}

/* Same arithmetic as UniformBins._keys_block. */
static int
code_uniform(const Coding *c, const double *x, const uint8_t *labels, Py_ssize_t m, uint64_t *out)
{
    int nan = 0;
    double top = (double)c->n + 1.0;
    for (Py_ssize_t j = 0; j < m; j++) {
        double s = x[j];
        if (s != s) {
            nan = 1;
            break;
        }
        double guess = (s - c->lo) * c->scale;
        guess = guess < -1.0 ? -1.0 : (guess > top ? top : guess);
        int64_t k = (int64_t)guess + 1; /* truncation, as numpy's astype */
        k = k < 0 ? 0 : (k > c->n + 1 ? c->n + 1 : k);
        k -= s < c->lower[k];
        k += s >= c->upper[k]; /* the last upper edge is nan: never */
        out[j] = (uint64_t)k + labels[j] * c->n_codes;
    }
    return nan;
}

/* Same as EdgeBins._keys_block: the number of edges <= s (numpy's searchsorted,
 * side="right"), by a branch-free binary search whose steps depend only on the
 * number of edges, so four scores go through it side by side. */
#define EDGE_STEP(F, S) F += half & -(Py_ssize_t)((F)[half - 1] <= (S)) /* a mask, not a branch */

static int
code_edges(const Coding *c, const double *x, const uint8_t *labels, Py_ssize_t m, uint64_t *out)
{
    for (Py_ssize_t j = 0; j < m; j++) {
        if (x[j] != x[j])
            return 1;
    }
    const double *edges = c->edges;
    Py_ssize_t j = 0;
    for (; j + 4 <= m; j += 4) {
        double s0 = x[j], s1 = x[j + 1], s2 = x[j + 2], s3 = x[j + 3];
        const double *f0 = edges, *f1 = edges, *f2 = edges, *f3 = edges;
        for (Py_ssize_t len = c->n_edges; len > 1;) {
            Py_ssize_t half = len / 2;
            EDGE_STEP(f0, s0);
            EDGE_STEP(f1, s1);
            EDGE_STEP(f2, s2);
            EDGE_STEP(f3, s3);
            len -= half;
        }
        out[j] = (uint64_t)((f0 - edges) + (f0[0] <= s0)) + labels[j] * c->n_codes;
        out[j + 1] = (uint64_t)((f1 - edges) + (f1[0] <= s1)) + labels[j + 1] * c->n_codes;
        out[j + 2] = (uint64_t)((f2 - edges) + (f2[0] <= s2)) + labels[j + 2] * c->n_codes;
        out[j + 3] = (uint64_t)((f3 - edges) + (f3[0] <= s3)) + labels[j + 3] * c->n_codes;
    }
    for (; j < m; j++) {
        double s = x[j];
        const double *f = edges;
        for (Py_ssize_t len = c->n_edges; len > 1;) {
            Py_ssize_t half = len / 2;
            EDGE_STEP(f, s);
            len -= half;
        }
        out[j] = (uint64_t)((f - edges) + (f[0] <= s)) + labels[j] * c->n_codes;
    }
    return 0;
}

/* The shared part of the count_* functions: the buffers every scheme takes. */
typedef struct {
    Py_buffer x, labels, base, rows, counts, weights, tally, hits;
    int width;
    Py_ssize_t start, end, block;
} Batch;

static void
release_batch(Batch *b)
{
    PyBuffer_Release(&b->x);
    PyBuffer_Release(&b->labels);
    PyBuffer_Release(&b->base);
    PyBuffer_Release(&b->rows);
    PyBuffer_Release(&b->counts);
    PyBuffer_Release(&b->weights);
    PyBuffer_Release(&b->tally);
    PyBuffer_Release(&b->hits);
}

/* Adds the calibration terms of m checked events (x, 0/1 labels) into sums: Brier units low and high words, log
 * loss units low and high words, events outside [0, 1], positives, events (defined with the calibration sums). */
static void add_chunk_sums(const double *x, const uint8_t *labels, Py_ssize_t m, uint64_t *sums);

/* Check the batch against the table (codes fall below 2 ** code_bits) and count it; with `sums` (seven uint64,
 * added to), the calibration sums of the events counted too, from the chunk the count has just read. */
static PyObject *
run_count(Batch *b, Table *tb, uint64_t code_limit, coder code, const Coding *coding, uint64_t *sums)
{
    Py_ssize_t n = b->x.len / (Py_ssize_t)sizeof(double);
    int width = b->width;
    int width_ok = width == 1 || width == 2 || width == 4 || width == 8;
    Py_ssize_t n_labels = width_ok ? b->labels.len / width : -1;
    uint64_t n_pages = (uint64_t)(b->base.len / (Py_ssize_t)sizeof(int32_t));
    Py_ssize_t start = b->start, end = b->end;
    tb->base = (int32_t *)b->base.buf;
    tb->page_of_row = (int64_t *)b->rows.buf;
    tb->capacity = b->rows.len / (Py_ssize_t)sizeof(int64_t);
    tb->counts = b->counts.buf;
    tb->n_slots = (uint64_t)(b->counts.len / 8);
    if (start < 0 || end > n || start > end || !width_ok || b->labels.len % width ||
        (n_labels != 1 && n_labels != n) || (tb->sign != 1 && tb->sign != -1) ||
        n_pages << PAGE_BITS < code_limit || tb->n_stored < 0 || tb->n_stored > tb->capacity ||
        (uint64_t)tb->capacity * (PAGE_MASK + 1) > tb->n_slots || tb->capacity > (INT32_MAX >> PAGE_BITS)) {
        PyErr_SetString(PyExc_ValueError, "count kernel: inconsistent arguments");
        return NULL;
    }
    /* weighted: `counts` is the pending tally of the current block, `tally` the sum of the blocks before */
    int weighted = b->weights.len > 0;
    const double *weights = (const double *)b->weights.buf;
    double *tally = (double *)b->tally.buf;
    tb->hits = (uint8_t *)b->hits.buf;
    if (weighted && (b->weights.len != n * (Py_ssize_t)sizeof(double) || !tb->counts_float || tb->sign != 1 ||
                     b->tally.len != b->counts.len || b->block <= 0 || end != n ||
                     (tb->check_threshold && b->hits.len != n))) {
        PyErr_SetString(PyExc_ValueError, "count kernel: inconsistent arguments");
        return NULL;
    }
    const double *x = (const double *)b->x.buf;
    const char *labels = (const char *)b->labels.buf;
    uint64_t codes[CHUNK];
    uint8_t chunk_labels[CHUNK];
    int broadcast = n_labels == 1 && n != 1;
    int refused = 0;
    Py_ssize_t i = start;
    if (broadcast) {
        if (labels_chunk(labels, width, 1, chunk_labels))
            refused = 1;
        memset(chunk_labels, chunk_labels[0], CHUNK);
    }
    /* the shadow table costs a pass over the slots: worth it for many events per slot */
    tb->shadow = NULL;
    if (!weighted && tb->capacity > 0 && (uint64_t)(end - start) >= 8 * (uint64_t)tb->capacity * (PAGE_MASK + 1)) {
        tb->shadow = PyMem_Calloc((size_t)tb->capacity << PAGE_BITS, 8);
        if (tb->shadow == NULL)
            return PyErr_NoMemory();
    }
    /* the count touches only the buffers held above: other threads run meanwhile (one accumulator is still
     * for one thread at a time, as every Python object: Locked serialises the calls) */
    Py_BEGIN_ALLOW_THREADS
    while (i < end && !refused) {
        Py_ssize_t m = end - i < CHUNK ? end - i : CHUNK;
        if (weighted && b->block - i % b->block < m)
            m = b->block - i % b->block; /* a chunk ends where a block does */
        if (!broadcast && labels_chunk(labels + i * width, width, m, chunk_labels)) {
            refused = 1;
            break;
        }
        if (code(coding, x + i, chunk_labels, m, codes)) {
            refused = 1;
            break;
        }
        Py_ssize_t counted =
            weighted ? count_weighted_chunk(tb, codes, weights + i, tb->hits + (tb->check_threshold ? i : 0), m)
                     : count_chunk(tb, codes, x + i, m);
        if (sums != NULL && counted > 0)
            add_chunk_sums(x + i, chunk_labels, counted, sums);
        i += counted;
        if (tb->bad)
            break;
        if (weighted && counted == m && (i % b->block == 0 || i == n))
            fold_block(tb, tally);
        if (counted < m)
            break;
    }
    if (tb->shadow != NULL)
        fold_shadow(tb);
    Py_END_ALLOW_THREADS
    PyMem_Free(tb->shadow);
    tb->shadow = NULL;
    if (tb->bad) {
        PyErr_Format(PyExc_ValueError, "count kernel: the score at index %zd falls outside the table", i);
        return NULL;
    }
    return Py_BuildValue("nOnLL", i, refused ? Py_True : Py_False, tb->n_stored, tb->above[0], tb->above[1]);
}

#define COUNT_SIGNATURE                                                                \
    "(x, labels, label_width, base, page_of_row, n_stored, counts, counts_float,\n"  \
    "    sign, t_neg, t_pos, check_threshold, threshold, start, end,\n"              \
    "    weights, tally, hits, block, "

#define COUNT_DOC                                                                      \
    "Add ``sign`` at the labelled code of every score ``x[start:end]`` (float64)\n"  \
    "with its label (unsigned integers of ``label_width`` bytes that must be 0\n"    \
    "or 1, one per score or one for all) into ``counts`` (int64, or float64\n"       \
    "when ``counts_float``), located through the page table ``base`` (int32,\n"      \
    "negative for a page with no storage). A page with no storage gets row\n"        \
    "``n_stored`` (``page_of_row`` records it) while ``len(page_of_row)`` rows\n"    \
    "last.\n\n"                                                                       \
    "Stops at ``end``, before the first chunk of 256 events holding a NaN score\n"   \
    "or a label other than 0 and 1, or before the first score that needs a row\n"    \
    "when none is left. Returns ``(stop, refused, n_stored, above_neg,\n"            \
    "above_pos)``: where it stopped, whether bad input stopped it, the rows now\n"   \
    "in use, and, when ``check_threshold``, the signed number of negatives and\n"    \
    "positives counted at the codes ``t_neg``/``t_pos`` with a score >=\n"           \
    "``threshold``.\n\n"                                                              \
    "With ``weights`` (float64, one per score; empty for none) nothing is\n"        \
    "counted: ``counts`` (float64) and ``tally`` are the tallies of numpy's\n"       \
    "path, summed in the same order (each block of ``block`` events in event\n"     \
    "order, then added to ``tally``), ``hits`` marks the events at the\n"           \
    "threshold codes, ``sign`` must be 1 and ``end`` the last event."

/* Parses the arguments every count_* function shares, then FORMAT: the scheme's own. */
#define PARSE_BATCH(FORMAT, ...)                                                                             \
    PyArg_ParseTuple(args, "y*y*iw*w*nw*piKKpdnny*w*w*n" FORMAT, &b.x, &b.labels, &b.width, &b.base, &b.rows, \
                     &tb.n_stored, &b.counts, &tb.counts_float, &tb.sign, &tb.t_neg, &tb.t_pos,              \
                     &tb.check_threshold, &tb.threshold, &b.start, &b.end, &b.weights, &b.tally, &b.hits,    \
                     &b.block, __VA_ARGS__)

PyDoc_STRVAR(count_range_free_doc,
"count_range_free" COUNT_SIGNATURE "shift, tag_shift, sums=None)\n--\n\n" COUNT_DOC
"\n\nCodes of a range-free scheme (``RangeFreeBins._labelled_codes``). With ``sums`` (seven uint64, added\n"
"to; unweighted events with ``sign`` 1 only), the calibration sums of the events counted as well, from\n"
"each chunk as it is counted: Brier units (low and high words), log-loss units (low and high words),\n"
"events outside [0, 1], positives and events, as calibration_sums gives them.");

static PyObject *
count_range_free(PyObject *Py_UNUSED(module), PyObject *args)
{
    Batch b = {0};
    Table tb = {0};
    Coding c = {0};
    PyObject *sums_obj = Py_None;
    if (!PARSE_BATCH("ii|O:count_range_free", &c.shift, &c.tag_shift, &sums_obj))
        return NULL;
    PyObject *result = NULL;
    Py_buffer sums = {0};
    int with_sums = sums_obj != Py_None;
    if (with_sums && PyObject_GetBuffer(sums_obj, &sums, PyBUF_WRITABLE) < 0) {
        sums.obj = NULL;
        release_batch(&b);
        return NULL;
    }
    /* every 64-bit pattern shifted by `shift`, with two tag bits on top, falls below 2 ** (66 - shift) */
    if (c.shift < 8 || c.shift > 63 || c.tag_shift != 64 - c.shift ||
        (with_sums && (sums.len != 7 * 8 || b.weights.len > 0 || tb.sign != 1)))
        PyErr_SetString(PyExc_ValueError, "count kernel: inconsistent arguments");
    else
        result = run_count(&b, &tb, (uint64_t)1 << (66 - c.shift), code_range_free, &c,
                           with_sums ? (uint64_t *)sums.buf : NULL);
    if (with_sums)
        PyBuffer_Release(&sums);
    release_batch(&b);
    return result;
}

PyDoc_STRVAR(count_uniform_doc,
"count_uniform" COUNT_SIGNATURE "lo, scale, n, lower, upper)\n--\n\n" COUNT_DOC
"\n\nCodes of a uniform scheme (``UniformBins``): ``lower`` and ``upper`` are\n"
"its ``n + 2`` lower and upper edges.");

static PyObject *
count_uniform(PyObject *Py_UNUSED(module), PyObject *args)
{
    Batch b = {0};
    Table tb = {0};
    Coding c = {0};
    Py_buffer lower, upper;
    if (!PARSE_BATCH("ddny*y*:count_uniform", &c.lo, &c.scale, &c.n, &lower, &upper))
        return NULL;
    c.lower = (const double *)lower.buf;
    c.upper = (const double *)upper.buf;
    c.n_codes = (uint64_t)c.n + 2;
    PyObject *result = NULL;
    Py_ssize_t n_edges = c.n + 2;
    if (c.n < 1 || lower.len != n_edges * (Py_ssize_t)sizeof(double) ||
        upper.len != n_edges * (Py_ssize_t)sizeof(double))
        PyErr_SetString(PyExc_ValueError, "count kernel: inconsistent arguments");
    else
        result = run_count(&b, &tb, 2 * c.n_codes, code_uniform, &c, NULL);
    PyBuffer_Release(&lower);
    PyBuffer_Release(&upper);
    release_batch(&b);
    return result;
}

PyDoc_STRVAR(count_edges_doc,
"count_edges" COUNT_SIGNATURE "edges)\n--\n\n" COUNT_DOC
"\n\nCodes of a scheme of given edges (``EdgeBins``).");

static PyObject *
count_edges(PyObject *Py_UNUSED(module), PyObject *args)
{
    Batch b = {0};
    Table tb = {0};
    Coding c = {0};
    Py_buffer edges;
    if (!PARSE_BATCH("y*:count_edges", &edges))
        return NULL;
    c.edges = (const double *)edges.buf;
    c.n_edges = edges.len / (Py_ssize_t)sizeof(double);
    c.n_codes = (uint64_t)c.n_edges + 1;
    PyObject *result = NULL;
    if (c.n_edges < 1)
        PyErr_SetString(PyExc_ValueError, "count kernel: inconsistent arguments");
    else
        result = run_count(&b, &tb, 2 * c.n_codes, code_edges, &c, NULL);
    PyBuffer_Release(&edges);
    release_batch(&b);
    return result;
}

/* ------------------------------------------------------------------------ */
/* Per-event buffer                                                          */
/* ------------------------------------------------------------------------ */

typedef struct {
    PyObject_HEAD
    PyObject *pos_label;
    PyObject *neg_label;
    PyObject *route; /* dict: label -> True (positive) / False (negative) */
    Py_ssize_t n;     /* events held */
    Py_ssize_t cap;   /* events the arrays below hold (grown as needed, up to CAPACITY) */
    double *scores;
    uint8_t *labels;  /* 1 = positive */
    Py_ssize_t wn;    /* events of a weight other than 1 held */
    Py_ssize_t wcap;
    double wtotal;    /* their weights' sum, added in their order */
    double wroom;     /* stored while wtotal stays at most this (the owner's _weighted_room, <= WEIGHTED_ROOM) */
    double *wscores;
    uint8_t *wlabels;
    double *wweights;
} EventBuffer;

/* A weighted event is stored by update() while the weights held, it included, sum to at most the buffer's room:
 * this, or less where the owner's counted total or sums are within this of the largest float (it sets
 * _weighted_room); past it the checked path files them first, so that a total weight that overflows is refused by
 * the call that brings it. */
#define WEIGHTED_ROOM 1e300

static PyObject *str_flush;
static PyObject *str_update_slow;

static int
EventBuffer_traverse(EventBuffer *self, visitproc visit, void *arg)
{
    Py_VISIT(self->pos_label);
    Py_VISIT(self->neg_label);
    Py_VISIT(self->route);
    return 0;
}

static int
EventBuffer_clear(EventBuffer *self)
{
    Py_CLEAR(self->pos_label);
    Py_CLEAR(self->neg_label);
    Py_CLEAR(self->route);
    return 0;
}

static void
EventBuffer_dealloc(EventBuffer *self)
{
    PyObject_GC_UnTrack(self);
    EventBuffer_clear(self);
    PyMem_Free(self->scores);
    PyMem_Free(self->labels);
    PyMem_Free(self->wscores);
    PyMem_Free(self->wlabels);
    PyMem_Free(self->wweights);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* Room for `need` events (at most CAPACITY) in a per-event buffer's `count` arrays of `sizes[i]` bytes an event,
 * `*cap` events each: they grow from 64 events by doubling, so that an accumulator with few events (one of many
 * segments, say) holds a few hundred bytes, not a full buffer (36 KB for a binary one's, 262 KB for 5 classes');
 * 0, or -1 with MemoryError set (the arrays hold what they held). */
static int
grow_arrays(Py_ssize_t *cap, Py_ssize_t need, int count, void **arrays[], const size_t sizes[])
{
    if (need <= *cap)
        return 0;
    Py_ssize_t want = *cap ? *cap : 64;
    while (want < need)
        want *= 2;
    if (want > CAPACITY)
        want = CAPACITY;
    for (int i = 0; i < count; i++) {
        void *grown = PyMem_Realloc(*arrays[i], (size_t)want * sizes[i]);
        if (grown == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        *arrays[i] = grown;
    }
    *cap = want;
    return 0;
}

static int
has_storage(EventBuffer *self, Py_ssize_t need)
{
    void **arrays[] = {(void **)&self->scores, (void **)&self->labels};
    const size_t sizes[] = {sizeof(double), 1};
    return grow_arrays(&self->cap, need, 2, arrays, sizes);
}

/* Storage for `need` weighted events; -1 with MemoryError set when it cannot be. */
static int
has_weighted_storage(EventBuffer *self, Py_ssize_t need)
{
    void **arrays[] = {(void **)&self->wscores, (void **)&self->wlabels, (void **)&self->wweights};
    const size_t sizes[] = {sizeof(double), 1, sizeof(double)};
    return grow_arrays(&self->wcap, need, 3, arrays, sizes);
}

/* Store one checked weighted event (room for it known). */
static inline void
push_weighted(EventBuffer *self, int is_pos, double score, double w)
{
    self->wscores[self->wn] = score;
    self->wlabels[self->wn] = (uint8_t)is_pos;
    self->wweights[self->wn] = w;
    self->wn++;
    self->wtotal += w;
}

/* Store one checked unit-weight event; hand a full buffer to _flush(). */
static int
push(EventBuffer *self, int is_pos, double score)
{
    if (self->n >= CAPACITY) { /* only if a flush failed before */
        PyObject *r = PyObject_CallMethodNoArgs((PyObject *)self, str_flush);
        if (r == NULL)
            return -1;
        Py_DECREF(r);
        if (self->n >= CAPACITY) {
            PyErr_SetString(PyExc_RuntimeError, "the per-event buffer was not emptied by _flush()");
            return -1;
        }
    }
    if (self->n >= self->cap && has_storage(self, self->n + 1) < 0)
        return -1;
    self->scores[self->n] = score;
    self->labels[self->n] = (uint8_t)is_pos;
    self->n++;
    if (self->n == CAPACITY) {
        PyObject *r = PyObject_CallMethodNoArgs((PyObject *)self, str_flush);
        if (r == NULL)
            return -1; /* the event is stored; the next event or read retries */
        Py_DECREF(r);
    }
    return 0;
}

/* 1 positive, 0 negative, -1 neither (or unhashable): the slow path explains. */
static int
route(EventBuffer *self, PyObject *y)
{
    if (y == self->pos_label)
        return 1;
    if (y == self->neg_label)
        return 0;
    if (self->route == NULL)
        return -1;
    PyObject *hit = PyDict_GetItemWithError(self->route, y);
    if (hit == NULL) {
        PyErr_Clear();
        return -1;
    }
    return hit == Py_True;
}

/* The score as a double, or -1 for the slow path (other types, NaN). */
static int
plain_score(PyObject *score, double *out)
{
    double d;
    if (PyFloat_Check(score)) {
        d = PyFloat_AS_DOUBLE(score);
    } else if (PyLong_CheckExact(score)) {
        d = PyLong_AsDouble(score);
        if (d == -1.0 && PyErr_Occurred()) {
            PyErr_Clear();
            return -1;
        }
    } else {
        return -1;
    }
    if (d != d)
        return -1;
    *out = d;
    return 0;
}

static PyObject *
slow(EventBuffer *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    Py_ssize_t total = nargs + (kwnames ? PyTuple_GET_SIZE(kwnames) : 0);
    PyObject *small[8];
    PyObject **call = total + 1 <= 8 ? small : PyMem_Malloc((total + 1) * sizeof(PyObject *));
    if (call == NULL)
        return PyErr_NoMemory();
    call[0] = (PyObject *)self;
    for (Py_ssize_t k = 0; k < total; k++)
        call[k + 1] = args[k];
    PyObject *r = PyObject_VectorcallMethod(str_update_slow, call, (size_t)(nargs + 1), kwnames);
    if (call != small)
        PyMem_Free(call);
    return r;
}

PyDoc_STRVAR(update_doc,
"update(y, score, w=1.0)\n"
"--\n\n"
"Count one event.\n\n"
"Parameters\n"
"----------\n"
"y : label\n"
"    ``pos_label`` or ``neg_label``.\n"
"score : float\n"
"    Higher means more likely positive; any real number but NaN.\n"
"w : float, default 1.0\n"
"    Weight, finite and >= 0.\n\n"
"Examples\n"
"--------\n"
">>> import streameval as se\n"
">>> acc = se.BinaryAccumulator()\n"
">>> acc.update(1, 0.8)\n"
">>> acc.update(0, 0.3, w=2.0)\n"
">>> acc.get().negatives\n"
"2.0\n");

static PyObject *
EventBuffer_update(EventBuffer *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    PyObject *weight = NULL; /* a third argument, or w= */
    if (kwnames == NULL && nargs == 3)
        weight = args[2];
    else if (kwnames != NULL && nargs == 2 && PyTuple_GET_SIZE(kwnames) == 1 &&
             PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, 0), "w") == 0)
        weight = args[2];
    if ((kwnames == NULL && nargs == 2) || (weight != NULL && PyFloat_CheckExact(weight))) {
        double score, w = weight == NULL ? 1.0 : PyFloat_AS_DOUBLE(weight);
        int is_pos = route(self, args[0]);
        if (is_pos >= 0 && plain_score(args[1], &score) == 0) {
            if (w == 1.0) {
                if (push(self, is_pos, score) < 0)
                    return NULL;
                Py_RETURN_NONE;
            }
            /* finite, >= 0 (NaN fails), room for it, not the one that fills the buffer: the checked path files */
            if (w >= 0.0 && w <= WEIGHTED_ROOM && self->wtotal + w <= self->wroom && self->wn + 1 < CAPACITY) {
                if (self->wn >= self->wcap && has_weighted_storage(self, self->wn + 1) < 0)
                    return NULL;
                push_weighted(self, is_pos, score, w);
                Py_RETURN_NONE;
            }
        }
    }
    return slow(self, args, nargsf, kwnames);
}

/* _push_weighted(is_pos, score, w): store one checked weighted event (the caller files a full buffer). */
static PyObject *
EventBuffer_push_weighted(EventBuffer *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "_push_weighted(is_pos, score, w)");
        return NULL;
    }
    int is_pos = PyObject_IsTrue(args[0]);
    double score = PyFloat_AsDouble(args[1]), w = PyFloat_AsDouble(args[2]);
    if (is_pos < 0 || PyErr_Occurred())
        return NULL;
    if (self->wn >= CAPACITY) {
        PyErr_SetString(PyExc_RuntimeError, "the buffer of weighted events is full: file it first");
        return NULL;
    }
    if (has_weighted_storage(self, self->wn + 1) < 0)
        return NULL;
    push_weighted(self, is_pos, score, w);
    Py_RETURN_NONE;
}

/* _push_weighted_many(labels, width, scores, weights) -> int: a small weighted batch (labels of `width` bytes,
 * float64 scores and weights), checked here and stored whole. 1: stored; 0: refused (a label other than 0 and 1,
 * a NaN score, a weight below 0, NaN or infinite, or their sum past the largest float: the batch path explains);
 * 2: they do not fit beside those stored (the caller files those first); 3: every weight is 1 (the caller stores
 * them as unit events). Nothing is stored but for 1. */
static PyObject *
EventBuffer_push_weighted_many(EventBuffer *self, PyObject *args)
{
    Py_buffer lb, xb, wb;
    int width;
    if (!PyArg_ParseTuple(args, "y*iy*y*", &lb, &width, &xb, &wb))
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t m = xb.len / (Py_ssize_t)sizeof(double);
    if (!(width == 1 || width == 2 || width == 4 || width == 8) || xb.len % (Py_ssize_t)sizeof(double) ||
        lb.len != m * width || wb.len != xb.len || m > CAPACITY) {
        PyErr_SetString(PyExc_ValueError, "_push_weighted_many: inconsistent arguments");
        goto done;
    }
    const double *x = (const double *)xb.buf, *w = (const double *)wb.buf;
    long status = 3;
    double total = 0.0;
    for (Py_ssize_t j = 0; j < m; j++) {
        if (!(w[j] >= 0.0 && w[j] < INFINITY)) { /* NaN fails too */
            status = 0;
            break;
        }
        if (w[j] != 1.0)
            status = 1;
        total += w[j];
    }
    uint8_t lab[CAPACITY]; /* the labels as 0/1 bytes */
    if (status == 1) {
        uint64_t nan = 0;
        for (Py_ssize_t j = 0; j < m; j++)
            nan |= x[j] != x[j];
        if (labels_chunk(lb.buf, width, m, lab) || nan || !isfinite(total))
            status = 0;
        else if (self->wn + m > CAPACITY || !isfinite(self->wtotal + total))
            status = 2;
    }
    if (status == 1) {
        if (has_weighted_storage(self, self->wn + m) < 0)
            goto done;
        for (Py_ssize_t j = 0; j < m; j++)
            push_weighted(self, lab[j], x[j], w[j]);
    }
    result = PyLong_FromLong(status);
done:
    PyBuffer_Release(&lb);
    PyBuffer_Release(&xb);
    PyBuffer_Release(&wb);
    return result;
}

/* _drop_last_weighted(m): take the last m weighted events back (a refused filing), their weights out of the sum
 * one by one, the last first. */
static PyObject *
EventBuffer_drop_last_weighted(EventBuffer *self, PyObject *arg)
{
    Py_ssize_t m = PyLong_AsSsize_t(arg);
    if (m == -1 && PyErr_Occurred())
        return NULL;
    if (m < 0 || m > self->wn) {
        PyErr_SetString(PyExc_ValueError, "_drop_last_weighted: more than the events held");
        return NULL;
    }
    for (Py_ssize_t j = 0; j < m; j++)
        self->wtotal -= self->wweights[--self->wn];
    Py_RETURN_NONE;
}

static PyObject *
EventBuffer_weighted_events(EventBuffer *self, PyObject *Py_UNUSED(ignored))
{
    Py_ssize_t n = self->wn;
    PyObject *scores = PyBytes_FromStringAndSize(n ? (const char *)self->wscores : NULL, n * (Py_ssize_t)sizeof(double));
    PyObject *labels = PyBytes_FromStringAndSize(n ? (const char *)self->wlabels : NULL, n);
    PyObject *weights = PyBytes_FromStringAndSize(n ? (const char *)self->wweights : NULL, n * (Py_ssize_t)sizeof(double));
    if (scores == NULL || labels == NULL || weights == NULL) {
        Py_XDECREF(scores);
        Py_XDECREF(labels);
        Py_XDECREF(weights);
        return NULL;
    }
    return Py_BuildValue("NNN", scores, labels, weights);
}

static PyObject *
EventBuffer_drop_weighted(EventBuffer *self, PyObject *Py_UNUSED(ignored))
{
    self->wn = 0;
    self->wtotal = 0.0;
    Py_RETURN_NONE;
}

static PyObject *
EventBuffer_push_unit(EventBuffer *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2 || !PyFloat_CheckExact(args[1])) {
        PyErr_SetString(PyExc_TypeError, "_push_unit(is_pos: bool, score: float)");
        return NULL;
    }
    int is_pos = PyObject_IsTrue(args[0]);
    if (is_pos < 0)
        return NULL;
    if (push(self, is_pos, PyFloat_AS_DOUBLE(args[1])) < 0)
        return NULL;
    Py_RETURN_NONE;
}

/* Room for `m` more events (at most CAPACITY) beside the `*n` a buffer holds, its events counted first when
 * they do not fit (`flush` called: `owner`'s method of that name, or `owner` itself when `method` is NULL; a
 * refusal there changes nothing of the new events): 1 when there is, 0 when there is not, -1 on an error. */
static int
room_for_many(const Py_ssize_t *n, Py_ssize_t m, PyObject *owner, PyObject *method)
{
    if (m > CAPACITY)
        return 0;
    if (*n + m <= CAPACITY)
        return 1;
    PyObject *r = method != NULL ? PyObject_CallMethodNoArgs(owner, method) : PyObject_CallNoArgs(owner);
    if (r == NULL)
        return -1;
    Py_DECREF(r);
    return *n + m <= CAPACITY;
}

/* A small batch of unit-weight events as per-event updates: 0/1 labels of `width` bytes and float64 scores,
 * stored only if every one is plain (a label 0 or 1, a score not NaN) and they fit in the buffer, after a
 * flush of the events held when they do not fit beside them; whether they were stored (else nothing changed,
 * and the batch path explains a refusal). */
static PyObject *
EventBuffer_push_many(EventBuffer *self, PyObject *args)
{
    Py_buffer lb, xb;
    int width;
    if (!PyArg_ParseTuple(args, "y*iy*", &lb, &width, &xb))
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t m = xb.len / (Py_ssize_t)sizeof(double);
    if (!(width == 1 || width == 2 || width == 4 || width == 8) || xb.len % (Py_ssize_t)sizeof(double) ||
        lb.len != m * width) {
        PyErr_SetString(PyExc_ValueError, "_push_many: inconsistent arguments");
        goto done;
    }
    if (m > CAPACITY) {
        result = Py_NewRef(Py_False);
        goto done;
    }
    const double *x = (const double *)xb.buf;
    uint8_t lab[CAPACITY]; /* the labels as 0/1 bytes */
    uint64_t nan = 0;
    int bad = labels_chunk(lb.buf, width, m, lab);
    for (Py_ssize_t j = 0; j < m; j++)
        nan |= x[j] != x[j];
    if (bad || nan) {
        result = Py_NewRef(Py_False);
        goto done;
    }
    if (m == 0) {
        result = Py_NewRef(Py_True);
        goto done;
    }
    int room = room_for_many(&self->n, m, (PyObject *)self, str_flush);
    if (room <= 0) {
        result = room < 0 ? NULL : Py_NewRef(Py_False);
        goto done;
    }
    if (has_storage(self, self->n + m) < 0)
        goto done;
    memcpy(self->scores + self->n, x, (size_t)m * sizeof(double));
    memcpy(self->labels + self->n, lab, (size_t)m);
    self->n += m;
    result = Py_NewRef(Py_True);
done:
    PyBuffer_Release(&lb);
    PyBuffer_Release(&xb);
    return result;
}

static PyObject *
EventBuffer_set_labels(EventBuffer *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "_set_labels(pos_label, neg_label)");
        return NULL;
    }
    PyObject *table = PyDict_New();
    if (table == NULL)
        return NULL;
    if (PyDict_SetItem(table, args[1], Py_False) < 0 || PyDict_SetItem(table, args[0], Py_True) < 0) {
        Py_DECREF(table);
        return NULL;
    }
    Py_INCREF(args[0]);
    Py_INCREF(args[1]);
    Py_XSETREF(self->pos_label, args[0]);
    Py_XSETREF(self->neg_label, args[1]);
    Py_XSETREF(self->route, table);
    self->n = 0;
    self->wn = 0;
    self->wtotal = 0.0;
    self->wroom = WEIGHTED_ROOM;
    Py_RETURN_NONE;
}

static PyObject *
EventBuffer_unit_events(EventBuffer *self, PyObject *Py_UNUSED(ignored))
{
    Py_ssize_t n = self->n;
    PyObject *scores = PyBytes_FromStringAndSize(n ? (const char *)self->scores : NULL, n * (Py_ssize_t)sizeof(double));
    if (scores == NULL)
        return NULL;
    PyObject *labels = PyBytes_FromStringAndSize(n ? (const char *)self->labels : NULL, n);
    if (labels == NULL) {
        Py_DECREF(scores);
        return NULL;
    }
    return Py_BuildValue("NN", scores, labels);
}

static PyObject *
EventBuffer_drop_unit(EventBuffer *self, PyObject *Py_UNUSED(ignored))
{
    self->n = 0;
    Py_RETURN_NONE;
}

static PyObject *
EventBuffer_get_n_unit(EventBuffer *self, void *Py_UNUSED(closure))
{
    return PyLong_FromSsize_t(self->n);
}

static PyObject *
EventBuffer_get_unit_nbytes(EventBuffer *self, void *Py_UNUSED(closure))
{
    return PyLong_FromSsize_t(self->cap * (Py_ssize_t)(sizeof(double) + 1));
}

static PyObject *
EventBuffer_get_n_weighted(EventBuffer *self, void *Py_UNUSED(closure))
{
    return PyLong_FromSsize_t(self->wn);
}

static PyObject *
EventBuffer_get_weighted_total(EventBuffer *self, void *Py_UNUSED(closure))
{
    return PyFloat_FromDouble(self->wtotal);
}

static PyObject *
EventBuffer_get_weighted_room(EventBuffer *self, void *Py_UNUSED(closure))
{
    return PyFloat_FromDouble(self->wroom);
}

static int
EventBuffer_set_weighted_room(EventBuffer *self, PyObject *value, void *Py_UNUSED(closure))
{
    double room = value == NULL ? -1.0 : PyFloat_AsDouble(value);
    if (room == -1.0 && PyErr_Occurred())
        return -1;
    if (!(room >= 0.0 && room <= WEIGHTED_ROOM)) {
        PyErr_SetString(PyExc_ValueError, "_weighted_room must be within [0, 1e300]");
        return -1;
    }
    self->wroom = room;
    return 0;
}

static PyObject *
EventBuffer_get_weighted_nbytes(EventBuffer *self, void *Py_UNUSED(closure))
{
    return PyLong_FromSsize_t(self->wcap * (Py_ssize_t)(2 * sizeof(double) + 1));
}

static PyMethodDef EventBuffer_methods[] = {
    {"update", (PyCFunction)(void (*)(void))EventBuffer_update, METH_FASTCALL | METH_KEYWORDS, update_doc},
    {"_push_unit", (PyCFunction)(void (*)(void))EventBuffer_push_unit, METH_FASTCALL,
     "Store one checked event of weight 1."},
    {"_push_many", (PyCFunction)EventBuffer_push_many, METH_VARARGS,
     "_push_many(labels, width, scores) -> bool: store a small batch of plain unit-weight events, or nothing."},
    {"_set_labels", (PyCFunction)(void (*)(void))EventBuffer_set_labels, METH_FASTCALL,
     "Set the two labels and empty the buffer."},
    {"_unit_events", (PyCFunction)EventBuffer_unit_events, METH_NOARGS,
     "A copy of the stored events: (scores as float64 bytes, labels as uint8 bytes)."},
    {"_drop_unit", (PyCFunction)EventBuffer_drop_unit, METH_NOARGS, "Empty the buffer (after its events were counted)."},
    {"_push_weighted", (PyCFunction)(void (*)(void))EventBuffer_push_weighted, METH_FASTCALL,
     "Store one checked event of a weight other than 1."},
    {"_push_weighted_many", (PyCFunction)EventBuffer_push_weighted_many, METH_VARARGS,
     "Check a small weighted batch (labels of `width` bytes, float64 scores and weights) and store it whole: 1\n"
     "stored, 0 refused, 2 does not fit beside those stored, 3 every weight is 1 (nothing stored but for 1)."},
    {"_drop_last_weighted", (PyCFunction)EventBuffer_drop_last_weighted, METH_O,
     "Take the last m weighted events back (a refused filing)."},
    {"_weighted_events", (PyCFunction)EventBuffer_weighted_events, METH_NOARGS,
     "A copy of the stored weighted events: (scores float64 bytes, labels 0/1 bytes, weights float64 bytes)."},
    {"_drop_weighted", (PyCFunction)EventBuffer_drop_weighted, METH_NOARGS,
     "Empty the weighted events (after they were counted)."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef EventBuffer_getset[] = {
    {"_n_unit", (getter)EventBuffer_get_n_unit, NULL, "Events stored.", NULL},
    {"_unit_nbytes", (getter)EventBuffer_get_unit_nbytes, NULL, "Bytes of the event buffer.", NULL},
    {"_n_weighted", (getter)EventBuffer_get_n_weighted, NULL, "Weighted events stored.", NULL},
    {"_weighted_total", (getter)EventBuffer_get_weighted_total, NULL, "The stored weights' sum.", NULL},
    {"_weighted_room", (getter)EventBuffer_get_weighted_room, (setter)EventBuffer_set_weighted_room,
     "The stored weights' room: update() stores a weighted event while their sum stays within it.", NULL},
    {"_weighted_nbytes", (getter)EventBuffer_get_weighted_nbytes, NULL, "Bytes of the weighted events' buffer.",
     NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject EventBufferType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "streameval._speedups.EventBuffer",
    .tp_doc = "Per-event buffer of a BinaryAccumulator (compiled).",
    .tp_basicsize = sizeof(EventBuffer),
    .tp_itemsize = 0,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_new = PyType_GenericNew,
    .tp_dealloc = (destructor)EventBuffer_dealloc,
    .tp_traverse = (traverseproc)EventBuffer_traverse,
    .tp_clear = (inquiry)EventBuffer_clear,
    .tp_methods = EventBuffer_methods,
    .tp_getset = EventBuffer_getset,
};


/* ------------------------------------------------------------------------ */
/* Exact regime: every distinct score with its counts, in a hash table       */
/* ------------------------------------------------------------------------ */

/* Keys are the bits of the score (-0.0 made 0.0); an empty slot holds a NaN
 * pattern, which no counted score has. Open addressing with linear probing;
 * the caller keeps the load at most 0.8 by growing the table. The Python
 * twin (ExactCounts in histogram.py) keeps sorted arrays instead: only the
 * layout differs, never a count. */
#define EXACT_EMPTY UINT64_C(0x7FF8DEADBEEFCAFE)

static inline uint64_t
exact_slot(uint64_t bits, uint64_t cap)
{
    uint64_t h = bits * UINT64_C(0x9E3779B97F4A7C15);
    h ^= h >> 29;
#ifdef __SIZEOF_INT128__
    return (uint64_t)(((unsigned __int128)h * cap) >> 64);
#else
    return h % cap;
#endif
}

/* The slot of `bits`, or of the empty slot where it would go. */
static inline uint64_t
exact_find(const uint64_t *keys, uint64_t cap, uint64_t bits)
{
    uint64_t j = exact_slot(bits, cap);
    while (keys[j] != bits && keys[j] != EXACT_EMPTY) {
        if (++j == cap)
            j = 0;
    }
    return j;
}

/* Add counts to a score's slot, taking an empty one for a new score; whether the score is new. */
static inline int
exact_add(uint64_t *keys, int64_t *counts, uint64_t cap, uint64_t bits, int64_t neg, int64_t pos)
{
    uint64_t j = exact_find(keys, cap, bits);
    int is_new = keys[j] == EXACT_EMPTY;
    keys[j] = bits;
    counts[2 * j] += neg;
    counts[2 * j + 1] += pos;
    return is_new;
}

static inline int
read_label(const char *labels, int width, Py_ssize_t i, uint64_t *out)
{
    uint64_t v;
    switch (width) {
    case 1: v = ((const uint8_t *)labels)[i]; break;
    case 2: v = ((const uint16_t *)labels)[i]; break;
    case 4: v = ((const uint32_t *)labels)[i]; break;
    default: v = ((const uint64_t *)labels)[i]; break;
    }
    *out = v;
    return v > 1;
}

PyDoc_STRVAR(count_exact_doc,
"count_exact(x, labels, width, keys, counts, used, room, start, end, sign, keep_slots=False)\n\n"
"Count scores x[start:end] (one 0/1 label per score of `width` bytes, or one for all) into the\n"
"hash table `keys` with `counts` [negatives, positives] per slot, adding `sign`. A new score takes\n"
"an empty slot while fewer than `room` slots are used. Stops at a NaN score or another label\n"
"(refused) or at a new score with no room. With `sign` -1 the events are taken out: a score the\n"
"table does not hold, or a count already 0, is refused too (nothing goes below 0), and a score left\n"
"with no events leaves the table (its slot is emptied, `used` counts one less), or, with `keep_slots`,\n"
"keeps its slot with counts of 0 until compact_exact (a batch: one pass over the slots for all of them).\n"
"Returns (done, refused, used).");

/* Empty slot `i` of a table with linear probing, moving back the scores after it in its run that their
 * probe would no longer reach (backward-shift deletion): every other score is still found where its probe
 * from its home slot ends, and no slot marks a deleted score. */
static inline void
exact_remove(uint64_t *keys, int64_t *counts, uint64_t cap, uint64_t i)
{
    uint64_t j = i;
    for (;;) {
        if (++j == cap)
            j = 0;
        if (keys[j] == EXACT_EMPTY)
            break;
        uint64_t home = exact_slot(keys[j], cap);
        /* the score at j stays where its home lies cyclically in (i, j]: its probe passes no emptied slot */
        int stays = i <= j ? (i < home && home <= j) : (i < home || home <= j);
        if (stays)
            continue;
        keys[i] = keys[j];
        counts[2 * i] = counts[2 * j];
        counts[2 * i + 1] = counts[2 * j + 1];
        i = j;
    }
    keys[i] = EXACT_EMPTY;
    counts[2 * i] = counts[2 * i + 1] = 0;
}

/* One event: find or take the score's slot and add to its count; 0 when there is no room. Taken out
 * (sign -1): refused where the table does not hold the score or its count is 0; a score left with no events
 * leaves the table. */
#if defined(__GNUC__)
#define EXACT_PREFETCH(P) __builtin_prefetch(P)
#else
#define EXACT_PREFETCH(P) ((void)(P))
#endif
#define EXACT_AHEAD 16           /* events ahead whose slots a large table's count fetches */
#define EXACT_FAR_SLOTS 16384    /* a table of 384 KiB or more: its slots are mostly not in cache */

#define EXACT_STEP(LABEL)                                                  \
    {                                                                      \
        if (far && i + EXACT_AHEAD < end) {                                \
            double ahead = xs[i + EXACT_AHEAD] + 0.0;                      \
            uint64_t ahead_bits;                                           \
            memcpy(&ahead_bits, &ahead, sizeof ahead_bits);                \
            uint64_t h = exact_slot(ahead_bits, cap);                      \
            EXACT_PREFETCH(&k[h]);                                         \
            EXACT_PREFETCH(&counts[2 * h]);                                \
        }                                                                  \
        double s = xs[i] + 0.0; /* -0.0 becomes 0.0 */                     \
        uint64_t bits;                                                     \
        memcpy(&bits, &s, sizeof bits);                                    \
        uint64_t j = exact_find(k, cap, bits);                             \
        if (sign < 0) {                                                    \
            if (k[j] == EXACT_EMPTY || counts[2 * j + (LABEL)] == 0) {     \
                refused = 1;                                               \
                break;                                                     \
            }                                                              \
            if (--counts[2 * j + (LABEL)] == 0 && counts[2 * j + 1 - (LABEL)] == 0 && !keep_slots) { \
                exact_remove(k, counts, cap, j);                           \
                used--;                                                    \
            }                                                              \
            continue;                                                      \
        }                                                                  \
        if (k[j] == EXACT_EMPTY) {                                         \
            if (used >= room)                                              \
                break;                                                     \
            k[j] = bits;                                                   \
            used++;                                                        \
        }                                                                  \
        counts[2 * j + (LABEL)] += 1;                                      \
    }

static PyObject *
count_exact(PyObject *self, PyObject *args)
{
    Py_buffer x, labels, keys, cnt;
    int width, sign, keep_slots = 0;
    Py_ssize_t used, room, start, end;
    if (!PyArg_ParseTuple(args, "y*y*iw*w*nnnni|p", &x, &labels, &width, &keys, &cnt, &used, &room, &start, &end,
                          &sign, &keep_slots))
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t n = x.len / (Py_ssize_t)sizeof(double);
    int width_ok = width == 1 || width == 2 || width == 4 || width == 8;
    Py_ssize_t n_labels = width_ok ? labels.len / width : -1;
    uint64_t cap = (uint64_t)(keys.len / 8);
    if (start < 0 || end > n || start > end || !width_ok || labels.len % width || (n_labels != 1 && n_labels != n) ||
        cap == 0 || cnt.len != 2 * keys.len || used < 0 || room < used || (uint64_t)room > cap - 1 ||
        (sign != 1 && sign != -1)) {
        PyErr_SetString(PyExc_ValueError, "count_exact: inconsistent arguments");
        goto done;
    }
    const double *xs = (const double *)x.buf;
    const char *lab = (const char *)labels.buf;
    uint64_t *k = (uint64_t *)keys.buf;
    int64_t *counts = (int64_t *)cnt.buf;
    int refused = 0;
    int far = cap >= EXACT_FAR_SLOTS;
    Py_ssize_t i = start;
    Py_BEGIN_ALLOW_THREADS
    if (n_labels == 1 && n != 1) { /* one label for every score */
        uint64_t label = 0;
        refused = read_label(lab, width, 0, &label);
        for (; i < end && !refused; i++) {
            if (xs[i] != xs[i]) {
                refused = 1;
                break;
            }
            EXACT_STEP(label)
        }
    }
    else if (width == 1) { /* bool and uint8 labels: the common case, read in place */
        const uint8_t *l8 = (const uint8_t *)lab;
        for (; i < end; i++) {
            if (xs[i] != xs[i] || l8[i] > 1) {
                refused = 1;
                break;
            }
            EXACT_STEP(l8[i])
        }
    }
    else {
        for (; i < end; i++) {
            uint64_t label;
            if (xs[i] != xs[i] || read_label(lab, width, i, &label)) {
                refused = 1;
                break;
            }
            EXACT_STEP(label)
        }
    }
    Py_END_ALLOW_THREADS
    result = Py_BuildValue("nOn", i, refused ? Py_True : Py_False, used);
done:
    PyBuffer_Release(&x);
    PyBuffer_Release(&labels);
    PyBuffer_Release(&keys);
    PyBuffer_Release(&cnt);
    return result;
}

PyDoc_STRVAR(sort_exact_doc,
"sort_exact(keys, counts, out_values, out_neg, out_pos) -> int\n\n"
"The table's scores ascending with their counts: each slot of `keys` (uint64, a score's bits or the empty\n"
"pattern) holding a score whose [negatives, positives] in `counts` (int64, two a slot) are not both 0 goes\n"
"into `out_values` (float64), `out_neg` and `out_pos` (int64, as long, room for them all); returns how many.\n"
"A radix sort of the scores' bits made monotone (what numpy's argsort of distinct scores gives).");

/* The bits of a double (not NaN, not -0.0) as an unsigned integer in the same order. */
static inline uint64_t
monotone_bits(uint64_t bits)
{
    return bits >> 63 ? ~bits : bits | (UINT64_C(1) << 63);
}

#define SORT_DIGIT 11
#define SORT_PASSES 6 /* 6 digits of 11 bits cover 64 */

static PyObject *
sort_exact(PyObject *Py_UNUSED(module), PyObject *args)
{
    Py_buffer kb, cb, vb, nb, pb;
    if (!PyArg_ParseTuple(args, "y*y*w*w*w*", &kb, &cb, &vb, &nb, &pb))
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t cap = kb.len / 8;
    if (kb.len % 8 || cb.len != 2 * kb.len || vb.len % 8 || nb.len != vb.len || pb.len != vb.len ||
        cap > (Py_ssize_t)UINT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "sort_exact: inconsistent arguments");
        goto done;
    }
    const uint64_t *keys = (const uint64_t *)kb.buf;
    const int64_t *counts = (const int64_t *)cb.buf;
    uint64_t *a = PyMem_Malloc((size_t)(cap ? cap : 1) * 4 * sizeof(uint64_t)); /* (key, slot) twice over */
    uint32_t *hist = PyMem_Calloc((size_t)SORT_PASSES << SORT_DIGIT, sizeof(uint32_t));
    if (a == NULL || hist == NULL) {
        PyMem_Free(a);
        PyMem_Free(hist);
        PyErr_NoMemory();
        goto done;
    }
    uint64_t *b = a + 2 * cap;
    Py_ssize_t m = 0;
    const uint64_t mask = (UINT64_C(1) << SORT_DIGIT) - 1;
    int fits = 1;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < cap; i++) { /* the scores held, and every digit's counts in one pass */
        if (keys[i] == EXACT_EMPTY || (counts[2 * i] == 0 && counts[2 * i + 1] == 0))
            continue;
        uint64_t k = monotone_bits(keys[i]);
        a[2 * m] = k;
        a[2 * m + 1] = (uint64_t)i;
        m++;
        for (int d = 0; d < SORT_PASSES; d++)
            hist[(d << SORT_DIGIT) + ((k >> (d * SORT_DIGIT)) & mask)]++;
    }
    fits = m <= (Py_ssize_t)(vb.len / 8);
    for (int d = 0; d < SORT_PASSES && fits; d++) { /* least digit first; a digit all scores share moves nothing */
        uint32_t *h = hist + (d << SORT_DIGIT);
        if (m == 0 || h[(a[0] >> (d * SORT_DIGIT)) & mask] == (uint32_t)m)
            continue;
        uint32_t sum = 0;
        for (Py_ssize_t j = 0; j <= (Py_ssize_t)mask; j++) {
            uint32_t c = h[j];
            h[j] = sum;
            sum += c;
        }
        for (Py_ssize_t i = 0; i < m; i++) {
            uint64_t k = a[2 * i];
            uint32_t at = h[(k >> (d * SORT_DIGIT)) & mask]++;
            b[2 * at] = k;
            b[2 * at + 1] = a[2 * i + 1];
        }
        uint64_t *t = a;
        a = b;
        b = t;
    }
    double *values = (double *)vb.buf;
    int64_t *neg = (int64_t *)nb.buf, *pos = (int64_t *)pb.buf;
    for (Py_ssize_t i = 0; i < m && fits; i++) {
        Py_ssize_t slot = (Py_ssize_t)a[2 * i + 1];
        memcpy(values + i, keys + slot, sizeof(double));
        neg[i] = counts[2 * slot];
        pos[i] = counts[2 * slot + 1];
    }
    Py_END_ALLOW_THREADS
    PyMem_Free(a < b ? a : b); /* the block's start: a and b are its two halves */
    PyMem_Free(hist);
    if (fits)
        result = PyLong_FromSsize_t(m);
    else
        PyErr_SetString(PyExc_ValueError, "sort_exact: the out_ arrays have no room for every score");
done:
    PyBuffer_Release(&kb);
    PyBuffer_Release(&cb);
    PyBuffer_Release(&vb);
    PyBuffer_Release(&nb);
    PyBuffer_Release(&pb);
    return result;
}

PyDoc_STRVAR(rehash_exact_doc,
"rehash_exact(keys, counts, new_keys, new_counts) -> used\n\n"
"Every score of a table (`keys`, uint64; `counts`, int64, two a slot) with a count other than 0 into an\n"
"empty larger one (`new_keys` all the empty pattern, `new_counts` zeros), in the order of the slots: the\n"
"table fill_exact makes of them. Returns how many scores it holds.");

static PyObject *
rehash_exact(PyObject *Py_UNUSED(module), PyObject *args)
{
    Py_buffer kb, cb, nkb, ncb;
    if (!PyArg_ParseTuple(args, "y*y*w*w*", &kb, &cb, &nkb, &ncb))
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t cap = kb.len / 8;
    uint64_t new_cap = (uint64_t)(nkb.len / 8);
    if (kb.len % 8 || cb.len != 2 * kb.len || nkb.len % 8 || ncb.len != 2 * nkb.len || new_cap == 0) {
        PyErr_SetString(PyExc_ValueError, "rehash_exact: inconsistent arguments");
        goto done;
    }
    const uint64_t *keys = (const uint64_t *)kb.buf;
    const int64_t *counts = (const int64_t *)cb.buf;
    uint64_t *k = (uint64_t *)nkb.buf;
    int64_t *to = (int64_t *)ncb.buf;
    Py_ssize_t held = 0, empty = 0;
    for (Py_ssize_t i = 0; i < cap; i++)
        held += keys[i] != EXACT_EMPTY && (counts[2 * i] | counts[2 * i + 1]) != 0;
    for (uint64_t j = 0; j < new_cap; j++)
        empty += k[j] == EXACT_EMPTY;
    if (held >= empty) { /* an empty slot left after every score: each probe ends */
        PyErr_SetString(PyExc_ValueError, "rehash_exact: the new table has no room for every score");
        goto done;
    }
    for (Py_ssize_t i = 0; i < cap; i++)
        if (keys[i] != EXACT_EMPTY && (counts[2 * i] | counts[2 * i + 1]) != 0)
            exact_add(k, to, new_cap, keys[i], counts[2 * i], counts[2 * i + 1]);
    result = PyLong_FromSsize_t(held);
done:
    PyBuffer_Release(&kb);
    PyBuffer_Release(&cb);
    PyBuffer_Release(&nkb);
    PyBuffer_Release(&ncb);
    return result;
}

PyDoc_STRVAR(compact_exact_doc,
"compact_exact(keys, counts) -> used\n\n"
"In place: every slot of the table whose score has no events left (counts both 0) emptied, and every other\n"
"score moved back to where a probe from its home slot first finds room, as a table filled with them afresh\n"
"at this size would hold them. One pass over the slots from an empty one. Returns how many scores it holds.");

static PyObject *
compact_exact(PyObject *Py_UNUSED(module), PyObject *args)
{
    Py_buffer kb, cb;
    if (!PyArg_ParseTuple(args, "w*w*", &kb, &cb))
        return NULL;
    PyObject *result = NULL;
    uint64_t cap = (uint64_t)(kb.len / 8);
    if (kb.len % 8 || cb.len != 2 * kb.len || cap == 0) {
        PyErr_SetString(PyExc_ValueError, "compact_exact: inconsistent arguments");
        goto done;
    }
    uint64_t *keys = (uint64_t *)kb.buf;
    int64_t *counts = (int64_t *)cb.buf;
    uint64_t start = 0;
    while (start < cap && keys[start] != EXACT_EMPTY)
        start++;
    if (start == cap) { /* a probe must end at an empty slot */
        PyErr_SetString(PyExc_ValueError, "compact_exact: the table has no empty slot");
        goto done;
    }
    Py_ssize_t used = 0;
    Py_BEGIN_ALLOW_THREADS
    /* From the slot after an empty one, in order: each score's slot is emptied and the score put where a probe
     * from its home first finds room. That is at or before its slot in its run, whose slots before it are done,
     * so no score is moved twice and every probe still ends where a fresh fill's would. */
    uint64_t i = start;
    for (uint64_t step = 0; step < cap; step++) {
        if (++i == cap)
            i = 0;
        uint64_t bits = keys[i];
        if (bits == EXACT_EMPTY)
            continue;
        int64_t neg = counts[2 * i], pos = counts[2 * i + 1];
        keys[i] = EXACT_EMPTY;
        counts[2 * i] = counts[2 * i + 1] = 0;
        if ((neg | pos) == 0)
            continue; /* no events left: the score leaves */
        uint64_t j = exact_find(keys, cap, bits);
        keys[j] = bits;
        counts[2 * j] = neg;
        counts[2 * j + 1] = pos;
        used++;
    }
    Py_END_ALLOW_THREADS
    result = PyLong_FromSsize_t(used);
done:
    PyBuffer_Release(&kb);
    PyBuffer_Release(&cb);
    return result;
}

PyDoc_STRVAR(fill_exact_doc,
"fill_exact(keys, counts, values, add_neg, add_pos, used) -> used\n\n"
"Add whole counts of distinct scores (no NaN, no -0.0) into the hash table; the caller gives room.");

static PyObject *
fill_exact(PyObject *self, PyObject *args)
{
    Py_buffer keys, cnt, values, add_neg, add_pos;
    Py_ssize_t used;
    if (!PyArg_ParseTuple(args, "w*w*y*y*y*n", &keys, &cnt, &values, &add_neg, &add_pos, &used))
        return NULL;
    PyObject *result = NULL;
    uint64_t cap = (uint64_t)(keys.len / 8);
    Py_ssize_t m = values.len / (Py_ssize_t)sizeof(double);
    if (cap == 0 || cnt.len != 2 * keys.len || add_neg.len != values.len ||
        add_pos.len != values.len || used < 0 || (uint64_t)(used + m) > cap - 1) {
        PyErr_SetString(PyExc_ValueError, "fill_exact: inconsistent arguments");
        goto done;
    }
    uint64_t *k = (uint64_t *)keys.buf;
    int64_t *counts = (int64_t *)cnt.buf;
    const uint64_t *vb = (const uint64_t *)values.buf;
    const int64_t *an = (const int64_t *)add_neg.buf, *ap = (const int64_t *)add_pos.buf;
    for (Py_ssize_t i = 0; i < m; i++)
        used += exact_add(k, counts, cap, vb[i], an[i], ap[i]);
    result = PyLong_FromSsize_t(used);
done:
    PyBuffer_Release(&keys);
    PyBuffer_Release(&cnt);
    PyBuffer_Release(&values);
    PyBuffer_Release(&add_neg);
    PyBuffer_Release(&add_pos);
    return result;
}

/* merge_exact's copy of the stored scores from *i on, while they are below `below` (all of them when `all`),
 * with their counts, to the out_ arrays at *m; nonzero when they are not ascending and distinct. */
static int
copy_stored(const double *values, const int64_t *neg, const int64_t *pos, Py_ssize_t ns, Py_ssize_t *i, int all,
            double below, double *out_values, int64_t *out_neg, int64_t *out_pos, Py_ssize_t *m)
{
    for (; *i < ns && (all || values[*i] < below); ++*i, ++*m) {
        if (*m > 0 && !(values[*i] > out_values[*m - 1]))
            return 1;
        out_values[*m] = values[*i];
        out_neg[*m] = neg[*i];
        out_pos[*m] = pos[*i];
    }
    return 0;
}

PyDoc_STRVAR(combine_exact_doc,
"combine_exact(values, neg, pos, other_values, other_neg, other_pos, sign, out_values, out_neg, out_pos) -> int\n\n"
"Two tables of sorted distinct scores with whole counts (int64) merged: the distinct scores of both, ascending,\n"
"with these counts plus `sign` (1 or -1) times the other's, scores left with no count dropped, written into\n"
"the `out_` arrays (as long as both tables together); returns how many, or -1 when a count would go negative\n"
"(the out arrays then hold anything). ExactCounts.combined of whole counts, in one merge pass.");

static PyObject *
combine_exact(PyObject *Py_UNUSED(module), PyObject *args)
{
    Py_buffer vb, nb, pb, wb, mb, qb, ovb, onb, opb;
    int sign;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*y*iw*w*w*", &vb, &nb, &pb, &wb, &mb, &qb, &sign, &ovb, &onb, &opb))
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t na = vb.len / 8, nb_ = wb.len / 8, m = 0;
    if (vb.len % 8 || nb.len != vb.len || pb.len != vb.len || wb.len % 8 || mb.len != wb.len || qb.len != wb.len ||
        (sign != 1 && sign != -1) || ovb.len != vb.len + wb.len || onb.len != ovb.len || opb.len != ovb.len) {
        PyErr_SetString(PyExc_ValueError, "combine_exact: inconsistent arguments");
        goto done;
    }
    const double *va = (const double *)vb.buf, *vo = (const double *)wb.buf;
    const int64_t *na_ = (const int64_t *)nb.buf, *pa = (const int64_t *)pb.buf;
    const int64_t *no = (const int64_t *)mb.buf, *po = (const int64_t *)qb.buf;
    double *out_values = (double *)ovb.buf;
    int64_t *out_neg = (int64_t *)onb.buf, *out_pos = (int64_t *)opb.buf;
    int bad = 0, negative = 0;
    Py_BEGIN_ALLOW_THREADS
    Py_ssize_t i = 0, j = 0;
    while (i < na || j < nb_) {
        double v;
        uint64_t neg, pos;
        if (j >= nb_ || (i < na && va[i] < vo[j])) {
            v = va[i];
            neg = (uint64_t)na_[i];
            pos = (uint64_t)pa[i];
            i++;
        }
        else {
            v = vo[j];
            uint64_t on = (uint64_t)no[j], op = (uint64_t)po[j];
            if (sign < 0) {
                on = (uint64_t)0 - on;
                op = (uint64_t)0 - op;
            }
            if (i < na && va[i] == v) { /* in both: the counts add */
                neg = (uint64_t)na_[i] + on;
                pos = (uint64_t)pa[i] + op;
                i++;
            }
            else {
                neg = on;
                pos = op;
            }
            j++;
        }
        if (v != v || (m > 0 && !(v > out_values[m - 1]))) {
            bad = 1; /* NaN, or a table not sorted and distinct */
            break;
        }
        if ((int64_t)neg < 0 || (int64_t)pos < 0)
            negative = 1;
        if (neg == 0 && pos == 0) /* a score left with no count */
            continue;
        out_values[m] = v;
        out_neg[m] = (int64_t)neg;
        out_pos[m] = (int64_t)pos;
        m++;
    }
    Py_END_ALLOW_THREADS
    if (bad)
        PyErr_SetString(PyExc_ValueError, "combine_exact: scores not sorted and distinct, or NaN");
    else
        result = PyLong_FromSsize_t(negative ? -1 : m);
done:
    PyBuffer_Release(&vb);
    PyBuffer_Release(&nb);
    PyBuffer_Release(&pb);
    PyBuffer_Release(&wb);
    PyBuffer_Release(&mb);
    PyBuffer_Release(&qb);
    PyBuffer_Release(&ovb);
    PyBuffer_Release(&onb);
    PyBuffer_Release(&opb);
    return result;
}

PyDoc_STRVAR(merge_exact_doc,
"merge_exact(values, neg, pos, x, labels, width, order, out_values, out_neg, out_pos) -> int\n\n"
"Sorted distinct scores `values` with whole counts `neg` and `pos` (int64), plus the events of scores x\n"
"(no NaN) with one 0/1 label each of `width` bytes (or one for all), taken in the ascending order `order`\n"
"(int64): writes the distinct scores of both, ascending (-0.0 as 0.0), and their counts into the `out_`\n"
"arrays (as long as values and x together) and returns how many. ExactCounts.combined of ExactCounts.of.");

static PyObject *
merge_exact(PyObject *Py_UNUSED(module), PyObject *args)
{
    Py_buffer vb, nb, pb, xb, lb, ob, ovb, onb, opb;
    int width;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*iy*w*w*w*", &vb, &nb, &pb, &xb, &lb, &width, &ob, &ovb, &onb, &opb))
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t ns = vb.len / 8, nx = xb.len / 8, m = 0;
    int width_ok = width == 1 || width == 2 || width == 4 || width == 8;
    Py_ssize_t n_labels = width_ok ? lb.len / width : -1;
    if (vb.len % 8 || nb.len != vb.len || pb.len != vb.len || xb.len % 8 || ob.len != xb.len || !width_ok ||
        lb.len % width || (n_labels != 1 && n_labels != nx) || ovb.len != vb.len + xb.len || onb.len != ovb.len ||
        opb.len != ovb.len) {
        PyErr_SetString(PyExc_ValueError, "merge_exact: inconsistent arguments");
        goto done;
    }
    const double *values = (const double *)vb.buf, *xs = (const double *)xb.buf;
    const int64_t *neg = (const int64_t *)nb.buf, *pos = (const int64_t *)pb.buf, *order = (const int64_t *)ob.buf;
    const char *lab = (const char *)lb.buf;
    double *out_values = (double *)ovb.buf;
    int64_t *out_neg = (int64_t *)onb.buf, *out_pos = (int64_t *)opb.buf;
    int bad = 0;
    Py_ssize_t i = 0;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t j = 0; j < nx && !bad; j++) {
        int64_t at = order[j];
        uint64_t label;
        if (at < 0 || at >= nx || read_label(lab, width, n_labels == 1 ? 0 : at, &label)) {
            bad = 1;
            break;
        }
        double v = xs[at] + 0.0; /* -0.0 becomes 0.0 */
        if (v != v || (m > 0 && v < out_values[m - 1])) {
            bad = 1; /* NaN, or not ascending */
            break;
        }
        if (copy_stored(values, neg, pos, ns, &i, 0, v, out_values, out_neg, out_pos, &m)) {
            bad = 1;
            break;
        }
        if (m == 0 || out_values[m - 1] != v) { /* the first event of this score */
            if (i < ns && values[i] == v) {
                out_neg[m] = neg[i];
                out_pos[m] = pos[i];
                i++;
            }
            else
                out_neg[m] = out_pos[m] = 0;
            out_values[m++] = v;
        }
        (label ? out_pos : out_neg)[m - 1] += 1;
    }
    if (!bad)
        bad = copy_stored(values, neg, pos, ns, &i, 1, 0.0, out_values, out_neg, out_pos, &m);
    Py_END_ALLOW_THREADS
    if (bad)
        PyErr_SetString(PyExc_ValueError, "merge_exact: scores not ascending, NaN, or a label other than 0 and 1");
    else
        result = PyLong_FromSsize_t(m);
done:
    PyBuffer_Release(&vb);
    PyBuffer_Release(&nb);
    PyBuffer_Release(&pb);
    PyBuffer_Release(&xb);
    PyBuffer_Release(&lb);
    PyBuffer_Release(&ob);
    PyBuffer_Release(&ovb);
    PyBuffer_Release(&onb);
    PyBuffer_Release(&opb);
    return result;
}

/* ------------------------------------------------------------------------ */
/* Calibration sums                                                          */
/* ------------------------------------------------------------------------ */

/* Each event's Brier term (y - p)^2 and log-loss term -log(clip(p or 1 - p))
 * for scores p in [0, 1] (zero and counted apart outside it). Unweighted, the
 * terms are rounded to whole units of 2^-52 (Brier) and 2^-46 (log loss) and
 * summed as integers, so that sums are exact and any order of counting,
 * merging and taking out gives the same state. The twin is
 * streameval/calibration.py, operation for operation: the logarithm is
 * fdlibm's reduction and polynomial written out, so that numpy's float
 * arithmetic gives the same bits (no fused multiply-adds, see CALIBRATION_MATH). */
#define CAL_EPS 2.220446049250313e-16 /* numpy's finfo(float64).eps: scikit-learn's clipping */
#define CAL_MAGIC 4503599627370496.0  /* 2^52: adding it leaves a whole number below 2^52 in the low bits */
#define CAL_MAGIC_BITS UINT64_C(0x4330000000000000)
#define CAL_LOG_UNIT 70368744177664.0 /* 2^46 units per nat; -log(eps) = 36.04 nats < 2^6 */

#if defined(__GNUC__) && !defined(__clang__)
#define CALIBRATION_MATH __attribute__((optimize("fp-contract=off", "no-trapping-math")))
#elif defined(__clang__)
#define CALIBRATION_MATH
#pragma clang fp contract(off)
#else
#define CALIBRATION_MATH
#endif
/* float arithmetic that must give numpy's results bit for bit: no fused multiply-adds */
#if defined(__GNUC__) && !defined(__clang__)
#define NO_FUSED_MATH __attribute__((optimize("fp-contract=off")))
#else
#define NO_FUSED_MATH
#endif

typedef union {
    double d;
    uint64_t u;
} FloatBits;

/* Per event of x[0:m] (m at most CHUNK: a chunk's masks are kept on the stack): the Brier and log-loss terms
 * (whole units when `units`, else the doubles' bits) and whether p is outside [0, 1] (its terms are 0). */
VECTOR_CLONES CALIBRATION_MATH static void
calibration_chunk(const double *restrict x, const uint8_t *restrict labels, Py_ssize_t m, int units,
                  FloatBits *restrict brier, FloatBits *restrict logloss, uint8_t *restrict outside)
{
    const double lg1 = 6.666666666666735130e-01, lg2 = 3.999999999940941908e-01, lg3 = 2.857142874366239149e-01,
                 lg4 = 2.222219843214978396e-01, lg5 = 1.818357216161805012e-01, lg6 = 1.531383769920937332e-01,
                 lg7 = 1.479819860511658591e-01, ln2_hi = 6.93147180369123816490e-01,
                 ln2_lo = 1.90821492927058770002e-10;
    const double b_scale = units ? CAL_MAGIC : 1.0, l_scale = units ? CAL_LOG_UNIT : 1.0;
    const double shift = units ? CAL_MAGIC : 0.0; /* adding 2^52 leaves the whole number of units in the low bits */
    const uint64_t shift_bits = units ? CAL_MAGIC_BITS : 0;
    /* the labels as 64-bit masks and the in-range masks as 64-bit words, each read or written in a loop of its
     * own: with bytes in it, the arithmetic's loop was vectorised 64 events at a time (745 instructions, 162 of
     * them spills to the stack), now 8 (66 instructions, 4 spills); the arithmetic's own operations bound it */
    uint64_t pos_masks[CHUNK], in_masks[CHUNK];
    for (Py_ssize_t j = 0; j < m; j++)
        pos_masks[j] = 0 - (uint64_t)(labels[j] & 1);
    for (Py_ssize_t j = 0; j < m; j++) {
        double p = x[j];
        double om = 1.0 - p;
        uint64_t pos = pos_masks[j];
        FloatBits P = {.d = p}, OM = {.d = om};
        FloatBits Q = {.u = (P.u & pos) | (OM.u & ~pos)}, D = {.u = (OM.u & pos) | (P.u & ~pos)};
        uint64_t in = 0 - (uint64_t)((p >= 0.0) & (p <= 1.0));
        double q = Q.d < CAL_EPS ? CAL_EPS : Q.d;
        q = q > 1.0 - CAL_EPS ? 1.0 - CAL_EPS : q;
        /* q = 2^k (1 + f) with sqrt(2)/2 < 1 + f < sqrt(2) */
        FloatBits U = {.d = q};
        uint64_t u = U.u + (UINT64_C(0x3FF0000000000000) - UINT64_C(0x3FE6A09E00000000));
        FloatBits K = {.u = (u >> 52) | CAL_MAGIC_BITS};
        double k = (K.d - CAL_MAGIC) - 1023.0;
        FloatBits M = {.u = (u & UINT64_C(0x000FFFFFFFFFFFFF)) + UINT64_C(0x3FE6A09E00000000)};
        double f = M.d - 1.0;
        double s = f / (2.0 + f);
        double z = s * s;
        double w = z * z;
        double t1 = w * (lg2 + w * (lg4 + w * lg6));
        double t2 = z * (lg1 + w * (lg3 + w * (lg5 + w * lg7)));
        double r = t2 + t1;
        double hfsq = 0.5 * f * f;
        double log_q = k * ln2_hi - ((hfsq - (s * (hfsq + r) + k * ln2_lo)) - f);
        FloatBits B = {.d = D.d * D.d * b_scale + shift}, L = {.d = -log_q * l_scale + shift};
        brier[j].u = (B.u - shift_bits) & in;
        logloss[j].u = (L.u - shift_bits) & in;
        in_masks[j] = in;
    }
    for (Py_ssize_t j = 0; j < m; j++)
        outside[j] = (uint8_t)(~in_masks[j] & 1);
}

/* Add a part (brier, -, log loss, -, outside, positives, events) into running sums of the same layout: the
 * two 128-bit sums with a carry, the counts plainly. */
static inline void
add_group_sums(uint64_t *restrict s, const uint64_t *restrict part)
{
    s[0] += part[0];
    s[1] += s[0] < part[0];
    s[2] += part[2];
    s[3] += s[2] < part[2];
    s[4] += part[4];
    s[5] += part[5];
    s[6] += part[6];
}

static void
add_chunk_sums(const double *x, const uint8_t *labels, Py_ssize_t m, uint64_t *sums)
{
    FloatBits brier[CHUNK], logloss[CHUNK];
    uint8_t out[CHUNK];
    calibration_chunk(x, labels, m, 1, brier, logloss, out);
    uint64_t part[7] = {0, 0, 0, 0, 0, 0, (uint64_t)m}; /* each unit count is below 2^52: 2^11 of them fit */
    for (Py_ssize_t j = 0; j < m; j++) {
        part[0] += brier[j].u;
        part[2] += logloss[j].u;
        part[4] += out[j];
        part[5] += labels[j];
    }
    add_group_sums(sums, part);
}

/* The sums of w[j] * b[j] and w[j] * l[j] over a chunk, in eight lanes (each lane a running sum of every eighth
 * product, the lanes then added in order, then the products past the last whole eight): the same additions in
 * the same order on every machine (GCC's vector type, lowered to each clone's registers; no fused
 * multiply-adds). One running sum per term waited on each addition: 10^6 weighted events took 2.60-2.62 ms with
 * it, 2.26-2.28 with the lanes (2.07 without weights). */
typedef double Lanes8 __attribute__((vector_size(64)));

VECTOR_CLONES NO_FUSED_MATH static void
weighted_term_sums(const double *restrict w, const FloatBits *restrict b, const FloatBits *restrict l, Py_ssize_t m,
                   double *b_sum, double *l_sum)
{
    Lanes8 sb = {0}, sl = {0};
    Py_ssize_t j = 0;
    for (; j + 8 <= m; j += 8) {
        Lanes8 wv, bv, lv;
        memcpy(&wv, w + j, sizeof wv);
        memcpy(&bv, b + j, sizeof bv);
        memcpy(&lv, l + j, sizeof lv);
        sb += wv * bv;
        sl += wv * lv;
    }
    double tb = 0.0, tl = 0.0;
    for (int k = 0; k < 8; k++) {
        tb += sb[k];
        tl += sl[k];
    }
    for (; j < m; j++) {
        tb += w[j] * b[j].d;
        tl += w[j] * l[j].d;
    }
    *b_sum = tb;
    *l_sum = tl;
}

PyDoc_STRVAR(calibration_sums_doc,
"calibration_sums(x, labels, width, weights) -> (positives, outside, brier, log_loss)\n\n"
"Sums of the Brier terms (y - p)^2 and log-loss terms -log(clip(p if y else 1 - p, eps, 1 - eps)) of\n"
"scores x with checked 0/1 labels (`width` bytes each, or one for all), and how many scores lie outside\n"
"[0, 1] (their terms are not summed), and how many labels are 1. Without weights (None) the sums are whole numbers of units,\n"
"2^-52 for Brier and 2^-46 for log loss; with weights, float sums of weight times term.");

/* The Python integer hi * 2^64 + lo (a new reference, or NULL with an exception set). */
static PyObject *
uint128_long(uint64_t hi, uint64_t lo)
{
    PyObject *result = NULL, *top = NULL, *shift = PyLong_FromLong(64);
    PyObject *high = PyLong_FromUnsignedLongLong(hi), *low = PyLong_FromUnsignedLongLong(lo);
    if (shift && high && low && (top = PyNumber_Lshift(high, shift)))
        result = PyNumber_Or(top, low);
    Py_XDECREF(shift);
    Py_XDECREF(high);
    Py_XDECREF(low);
    Py_XDECREF(top);
    return result;
}

static PyObject *
calibration_sums(PyObject *Py_UNUSED(module), PyObject *args)
{
    Py_buffer x, labels, weights = {0};
    int width;
    PyObject *w_obj;
    if (!PyArg_ParseTuple(args, "y*y*iO", &x, &labels, &width, &w_obj))
        return NULL;
    PyObject *result = NULL;
    int weighted = w_obj != Py_None;
    if (weighted && PyObject_GetBuffer(w_obj, &weights, PyBUF_SIMPLE) < 0) {
        weights.obj = NULL;
        goto done;
    }
    Py_ssize_t n = x.len / (Py_ssize_t)sizeof(double);
    int width_ok = width == 1 || width == 2 || width == 4 || width == 8;
    Py_ssize_t n_labels = width_ok ? labels.len / width : -1;
    if (!width_ok || labels.len % width || (n_labels != 1 && n_labels != n) || (weighted && weights.len != x.len)) {
        PyErr_SetString(PyExc_ValueError, "calibration_sums: inconsistent arguments");
        goto done;
    }
    const double *xs = (const double *)x.buf;
    const double *ws = weighted ? (const double *)weights.buf : NULL;
    FloatBits brier[CHUNK], logloss[CHUNK];
    uint8_t lab[CHUNK], out[CHUNK];
    uint64_t sums[7] = {0}; /* without weights: add_chunk_sums's whole units */
    double b_sum = 0.0, b_comp = 0.0, l_sum = 0.0, l_comp = 0.0; /* Neumaier's compensated sums */
    Py_ssize_t outside = 0, positives = 0;
    Py_BEGIN_ALLOW_THREADS
    if (n_labels == 1 && n > 0)
        labels_chunk(labels.buf, width, 1, lab);
    for (Py_ssize_t start = 0; start < n; start += CHUNK) {
        Py_ssize_t m = n - start < CHUNK ? n - start : CHUNK;
        if (n_labels == 1)
            memset(lab, lab[0], (size_t)m);
        else
            labels_chunk((const char *)labels.buf + start * width, width, m, lab);
        if (!weighted) {
            add_chunk_sums(xs + start, lab, m, sums);
            continue;
        }
        calibration_chunk(xs + start, lab, m, 0, brier, logloss, out);
        double bs, ls;
        weighted_term_sums(ws + start, brier, logloss, m, &bs, &ls);
        for (Py_ssize_t j = 0; j < m; j++) {
            outside += out[j];
            positives += lab[j];
        }
        double t = b_sum + bs;
        b_comp += fabs(b_sum) >= fabs(bs) ? (b_sum - t) + bs : (bs - t) + b_sum;
        b_sum = t;
        t = l_sum + ls;
        l_comp += fabs(l_sum) >= fabs(ls) ? (l_sum - t) + ls : (ls - t) + l_sum;
        l_sum = t;
    }
    Py_END_ALLOW_THREADS
    if (!weighted) {
        PyObject *b_all = uint128_long(sums[1], sums[0]), *l_all = uint128_long(sums[3], sums[2]);
        if (b_all && l_all)
            result = Py_BuildValue("KKOO", (unsigned long long)sums[5], (unsigned long long)sums[4], b_all, l_all);
        Py_XDECREF(b_all);
        Py_XDECREF(l_all);
    }
    else
        result = Py_BuildValue("nndd", positives, outside, b_sum + b_comp, l_sum + l_comp);
done:
    PyBuffer_Release(&x);
    PyBuffer_Release(&labels);
    if (weights.obj != NULL)
        PyBuffer_Release(&weights);
    return result;
}

PyDoc_STRVAR(calibration_sums_counts_doc,
"calibration_sums_counts(values, neg, pos) -> (positives, outside, brier, log_loss) or None\n\n"
"calibration_sums of the events that whole counts of distinct scores stand for: `neg[i]` events of label 0\n"
"and `pos[i]` of label 1 scoring `values[i]` (float64; int64 counts >= 0). Each score's two terms are\n"
"worked out once, in whole units as for its events, and multiplied by its counts: the same sums as a pass over\n"
"the events. None without 128-bit integers.");

static PyObject *
calibration_sums_counts(PyObject *Py_UNUSED(module), PyObject *args)
{
    Py_buffer vb, nb, pb;
    if (!PyArg_ParseTuple(args, "y*y*y*", &vb, &nb, &pb))
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t n = vb.len / (Py_ssize_t)sizeof(double);
    if (vb.len % 8 || nb.len != vb.len || pb.len != vb.len) {
        PyErr_SetString(PyExc_ValueError, "calibration_sums_counts: inconsistent arguments");
        goto done;
    }
#ifdef __SIZEOF_INT128__
    const double *xs = (const double *)vb.buf;
    const int64_t *neg = (const int64_t *)nb.buf, *pos = (const int64_t *)pb.buf;
    for (Py_ssize_t j = 0; j < n; j++) {
        if (neg[j] < 0 || pos[j] < 0) {
            PyErr_SetString(PyExc_ValueError, "calibration_sums_counts: a count below 0");
            goto done;
        }
    }
    FloatBits b0[CHUNK], l0[CHUNK], b1[CHUNK], l1[CHUNK];
    uint8_t zeros[CHUNK], ones[CHUNK], out[CHUNK], out1[CHUNK];
    memset(zeros, 0, sizeof zeros);
    memset(ones, 1, sizeof ones);
    unsigned __int128 brier = 0, log_loss = 0;
    uint64_t outside = 0, positives = 0;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t start = 0; start < n; start += CHUNK) {
        Py_ssize_t m = n - start < CHUNK ? n - start : CHUNK;
        calibration_chunk(xs + start, zeros, m, 1, b0, l0, out);
        calibration_chunk(xs + start, ones, m, 1, b1, l1, out1);
        for (Py_ssize_t j = 0; j < m; j++) {
            uint64_t a = (uint64_t)neg[start + j], b = (uint64_t)pos[start + j];
            brier += (unsigned __int128)b0[j].u * a + (unsigned __int128)b1[j].u * b;
            log_loss += (unsigned __int128)l0[j].u * a + (unsigned __int128)l1[j].u * b;
            outside += out[j] ? a + b : 0;
            positives += b;
        }
    }
    Py_END_ALLOW_THREADS
    PyObject *b_all = uint128_long((uint64_t)(brier >> 64), (uint64_t)brier);
    PyObject *l_all = uint128_long((uint64_t)(log_loss >> 64), (uint64_t)log_loss);
    if (b_all && l_all)
        result = Py_BuildValue("KKOO", (unsigned long long)positives, (unsigned long long)outside, b_all, l_all);
    Py_XDECREF(b_all);
    Py_XDECREF(l_all);
#else
    (void)n;
    result = Py_NewRef(Py_None);
#endif
done:
    PyBuffer_Release(&vb);
    PyBuffer_Release(&nb);
    PyBuffer_Release(&pb);
    return result;
}

/* ------------------------------------------------------------------------ */



/* Shared by the per-event buffers below: hand a full buffer to its owner. */
static int
room_for_one(Py_ssize_t *n, PyObject *on_full)
{
    if (*n >= CAPACITY) { /* only if a flush failed before */
        PyObject *r = PyObject_CallNoArgs(on_full);
        if (r == NULL)
            return -1;
        Py_DECREF(r);
        if (*n >= CAPACITY) {
            PyErr_SetString(PyExc_RuntimeError, "the per-event buffer was not emptied when full");
            return -1;
        }
    }
    return 0;
}

static int
one_stored(Py_ssize_t *n, PyObject *on_full)
{
    (*n)++;
    if (*n == CAPACITY) {
        PyObject *r = PyObject_CallNoArgs(on_full);
        if (r == NULL)
            return -1; /* the event is stored; the next event or read retries */
        Py_DECREF(r);
    }
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Per-event buffer of float columns (ScoreAccumulator, RegressionAccumulator) */
/* ------------------------------------------------------------------------ */

typedef struct {
    PyObject_HEAD
    Py_ssize_t width; /* values per event */
    Py_ssize_t n;     /* events held */
    Py_ssize_t cap;   /* events the arrays below hold (grown as needed, up to CAPACITY) */
    int weighted;     /* a weight other than 1 was stored */
    double *values;   /* CAPACITY * width, row by row */
    double *weights;  /* CAPACITY */
    PyObject *on_full; /* called with no argument when the buffer fills */
    PyObject *slow;    /* called with update's arguments when they are not plain */
} FloatEvents;

static PyObject *str_w;

static int
FloatEvents_traverse(FloatEvents *self, visitproc visit, void *arg)
{
    Py_VISIT(self->on_full);
    Py_VISIT(self->slow);
    return 0;
}

static int
FloatEvents_clear_refs(FloatEvents *self)
{
    Py_CLEAR(self->on_full);
    Py_CLEAR(self->slow);
    return 0;
}

static void
FloatEvents_dealloc(FloatEvents *self)
{
    PyObject_GC_UnTrack(self);
    FloatEvents_clear_refs(self);
    PyMem_Free(self->values);
    PyMem_Free(self->weights);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int
FloatEvents_init(FloatEvents *self, PyObject *args, PyObject *kwds)
{
    Py_ssize_t width;
    PyObject *on_full, *slow;
    static char *kwlist[] = {"width", "on_full", "slow", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "nOO", kwlist, &width, &on_full, &slow))
        return -1;
    if (width < 1 || width > 64) {
        PyErr_Format(PyExc_ValueError, "width must be 1 to 64, got %zd", width);
        return -1;
    }
    PyMem_Free(self->values);
    PyMem_Free(self->weights);
    self->values = NULL;
    self->weights = NULL;
    self->width = width;
    self->n = 0;
    self->cap = 0;
    self->weighted = 0;
    Py_INCREF(on_full);
    Py_INCREF(slow);
    Py_XSETREF(self->on_full, on_full);
    Py_XSETREF(self->slow, slow);
    return 0;
}

/* A finite double from an exact float or int; -1 for anything else (the slow path explains). */
static inline int
finite_value(PyObject *v, double *out)
{
    double d;
    if (PyFloat_CheckExact(v)) {
        d = PyFloat_AS_DOUBLE(v);
    } else if (PyLong_CheckExact(v)) {
        d = PyLong_AsDouble(v);
        if (d == -1.0 && PyErr_Occurred()) {
            PyErr_Clear();
            return -1;
        }
    } else {
        return -1;
    }
    if (!isfinite(d))
        return -1;
    *out = d;
    return 0;
}

static int
float_events_storage(FloatEvents *self, Py_ssize_t need)
{
    void **arrays[] = {(void **)&self->values, (void **)&self->weights};
    const size_t sizes[] = {(size_t)self->width * sizeof(double), sizeof(double)};
    return grow_arrays(&self->cap, need, 2, arrays, sizes);
}

static int
float_events_store(FloatEvents *self, const double *row, double w)
{
    if (room_for_one(&self->n, self->on_full) < 0)
        return -1;
    if (self->n >= self->cap && float_events_storage(self, self->n + 1) < 0)
        return -1;
    memcpy(self->values + self->n * self->width, row, self->width * sizeof(double));
    self->weights[self->n] = w;
    if (w != 1.0)
        self->weighted = 1;
    return one_stored(&self->n, self->on_full);
}

static PyObject *
FloatEvents_update(FloatEvents *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    Py_ssize_t width = self->width;
    double row[64], w = 1.0;
    int plain = 0;
    if (nkw == 0 && (nargs == width || nargs == width + 1))
        plain = 1;
    else if (nkw == 1 && nargs == width && PyTuple_GET_ITEM(kwnames, 0) == str_w)
        plain = 1;
    if (plain) {
        for (Py_ssize_t k = 0; k < width; k++) {
            if (finite_value(args[k], &row[k]) < 0 || fabs(row[k]) > LARGE_VALUE) {
                plain = 0;
                break;
            }
        }
        if (plain && nargs + nkw == width + 1 &&
            (finite_value(args[width], &w) < 0 || w < 0.0 || w > LARGE_WEIGHT))
            plain = 0;
    }
    if (!plain)
        return PyObject_Vectorcall(self->slow, args, nargsf, kwnames);
    if (float_events_store(self, row, w) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *
FloatEvents_push(FloatEvents *self, PyObject *const *args, Py_ssize_t nargs)
{
    double row[64];
    if (nargs != self->width + 1) {
        PyErr_Format(PyExc_TypeError, "push takes %zd values and a weight", self->width);
        return NULL;
    }
    for (Py_ssize_t k = 0; k <= self->width; k++) {
        double d = PyFloat_AsDouble(args[k]);
        if (d == -1.0 && PyErr_Occurred())
            return NULL;
        if (k < self->width)
            row[k] = d;
        else if (float_events_store(self, row, d) < 0)
            return NULL;
    }
    Py_RETURN_NONE;
}

/* A small batch of events as per-event updates: `width` float64 columns of one length, then optionally their
 * float64 weights, stored only if every value is finite and within LARGE_VALUE, every weight in [0,
 * LARGE_WEIGHT] (as update() stores one event), and they fit in the buffer, after a flush of the events held when
 * they do not fit beside them; whether they were stored (else nothing changed, and the batch path counts them or
 * explains a refusal). */
static PyObject *
FloatEvents_push_many(FloatEvents *self, PyObject *const *args, Py_ssize_t nargs)
{
    Py_ssize_t width = self->width, m = -1, got = 0;
    Py_buffer cols[65];
    PyObject *result = NULL;
    if (nargs != width && nargs != width + 1) {
        PyErr_Format(PyExc_TypeError, "push_many takes %zd columns, then optionally their weights", width);
        return NULL;
    }
    for (; got < nargs; got++) {
        if (PyObject_GetBuffer(args[got], &cols[got], PyBUF_C_CONTIGUOUS) < 0)
            goto done;
        Py_ssize_t len = cols[got].len / (Py_ssize_t)sizeof(double);
        if (cols[got].len % (Py_ssize_t)sizeof(double) || (m >= 0 && len != m)) {
            got++;
            PyErr_SetString(PyExc_ValueError, "push_many: inconsistent arguments");
            goto done;
        }
        m = len;
    }
    int plain = 1, weighted = 0;
    for (Py_ssize_t k = 0; k < width; k++) {
        const double *x = (const double *)cols[k].buf;
        for (Py_ssize_t j = 0; j < m; j++)
            plain &= fabs(x[j]) <= LARGE_VALUE; /* false for NaN and infinities too */
    }
    const double *w = nargs > width ? (const double *)cols[width].buf : NULL;
    for (Py_ssize_t j = 0; w != NULL && j < m; j++) {
        plain &= w[j] >= 0.0 && w[j] <= LARGE_WEIGHT; /* false for NaN too */
        weighted |= w[j] != 1.0;
    }
    int room = plain ? room_for_many(&self->n, m, self->on_full, NULL) : 0;
    if (room <= 0 || float_events_storage(self, self->n + m) < 0) {
        result = room < 0 || PyErr_Occurred() ? NULL : Py_NewRef(Py_False);
        goto done;
    }
    for (Py_ssize_t j = 0; j < m; j++) {
        for (Py_ssize_t k = 0; k < width; k++)
            self->values[(self->n + j) * width + k] = ((const double *)cols[k].buf)[j];
        self->weights[self->n + j] = w != NULL ? w[j] : 1.0;
    }
    self->weighted |= weighted;
    self->n += m;
    result = Py_NewRef(Py_True);
done:
    for (Py_ssize_t k = 0; k < got; k++)
        PyBuffer_Release(&cols[k]);
    return result;
}

static PyObject *
FloatEvents_arrays(FloatEvents *self, PyObject *Py_UNUSED(ignored))
{
    Py_ssize_t n = self->n;
    PyObject *values = PyBytes_FromStringAndSize(n ? (const char *)self->values : NULL,
                                                 n * self->width * (Py_ssize_t)sizeof(double));
    if (values == NULL)
        return NULL;
    if (!self->weighted)
        return Py_BuildValue("NO", values, Py_None);
    PyObject *weights = PyBytes_FromStringAndSize(n ? (const char *)self->weights : NULL,
                                                  n * (Py_ssize_t)sizeof(double));
    if (weights == NULL) {
        Py_DECREF(values);
        return NULL;
    }
    return Py_BuildValue("NN", values, weights);
}

static PyObject *
FloatEvents_clear(FloatEvents *self, PyObject *Py_UNUSED(ignored))
{
    self->n = 0;
    self->weighted = 0;
    Py_RETURN_NONE;
}

static Py_ssize_t
FloatEvents_len(FloatEvents *self)
{
    return self->n;
}

static PyMethodDef FloatEvents_methods[] = {
    {"update", (PyCFunction)(void (*)(void))FloatEvents_update, METH_FASTCALL | METH_KEYWORDS,
     "update(*values, w=1.0): store one event of finite floats, or hand the call to `slow`."},
    {"push", (PyCFunction)(void (*)(void))FloatEvents_push, METH_FASTCALL,
     "push(*values, w): store one checked event."},
    {"push_many", (PyCFunction)(void (*)(void))FloatEvents_push_many, METH_FASTCALL,
     "push_many(*columns[, weights]) -> bool: store a small batch of plain events, or nothing."},
    {"arrays", (PyCFunction)FloatEvents_arrays, METH_NOARGS,
     "(values as float64 bytes, row by row; weights as float64 bytes, or None when all are 1)."},
    {"clear", (PyCFunction)FloatEvents_clear, METH_NOARGS, "Empty the buffer (once its events are counted)."},
    {NULL, NULL, 0, NULL},
};

static PyMemberDef FloatEvents_members[] = {
    {"width", T_PYSSIZET, offsetof(FloatEvents, width), READONLY, "Values per event."},
    {NULL, 0, 0, 0, NULL},
};

static PySequenceMethods FloatEvents_as_sequence = {
    .sq_length = (lenfunc)FloatEvents_len,
};

static PyTypeObject FloatEventsType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "streameval._speedups.FloatEvents",
    .tp_doc = "Per-event buffer of float columns with weights (compiled).",
    .tp_basicsize = sizeof(FloatEvents),
    .tp_itemsize = 0,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)FloatEvents_init,
    .tp_dealloc = (destructor)FloatEvents_dealloc,
    .tp_traverse = (traverseproc)FloatEvents_traverse,
    .tp_clear = (inquiry)FloatEvents_clear_refs,
    .tp_methods = FloatEvents_methods,
    .tp_members = FloatEvents_members,
    .tp_as_sequence = &FloatEvents_as_sequence,
};


/* ------------------------------------------------------------------------ */
/* Per-event buffer of a MulticlassAccumulator                               */
/* ------------------------------------------------------------------------ */

typedef struct {
    PyObject_HEAD
    Py_ssize_t n;       /* events held */
    Py_ssize_t k;       /* scores per event (the classes when the buffer filled) */
    int weighted;
    int64_t *y;         /* class indices */
    int64_t *pred;      /* predicted class indices; -1: found when counted */
    double *scores;     /* scap * cap_k */
    double *weights;
    Py_ssize_t cap;     /* events y, pred and weights hold (grown as needed, up to CAPACITY) */
    Py_ssize_t scap;    /* events the scores block holds, at cap_k scores each */
    Py_ssize_t cap_k;   /* k the scores block was allocated for */
    PyObject *index;    /* dict class -> int, or NULL: no fast path */
    PyObject *keys;     /* tuple of the classes in order, or NULL with an index: predicted classes, not scores */
    PyObject *on_full;
    PyObject *slow;
} ClassRows;

static int
ClassRows_traverse(ClassRows *self, visitproc visit, void *arg)
{
    Py_VISIT(self->index);
    Py_VISIT(self->keys);
    Py_VISIT(self->on_full);
    Py_VISIT(self->slow);
    return 0;
}

static int
ClassRows_clear_refs(ClassRows *self)
{
    Py_CLEAR(self->index);
    Py_CLEAR(self->keys);
    Py_CLEAR(self->on_full);
    Py_CLEAR(self->slow);
    return 0;
}

static void
ClassRows_dealloc(ClassRows *self)
{
    PyObject_GC_UnTrack(self);
    ClassRows_clear_refs(self);
    PyMem_Free(self->y);
    PyMem_Free(self->pred);
    PyMem_Free(self->scores);
    PyMem_Free(self->weights);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int
ClassRows_init(ClassRows *self, PyObject *args, PyObject *kwds)
{
    PyObject *on_full, *slow;
    static char *kwlist[] = {"on_full", "slow", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OO", kwlist, &on_full, &slow))
        return -1;
    self->n = 0;
    self->k = 0;
    self->weighted = 0;
    Py_INCREF(on_full);
    Py_INCREF(slow);
    Py_XSETREF(self->on_full, on_full);
    Py_XSETREF(self->slow, slow);
    Py_CLEAR(self->index);
    Py_CLEAR(self->keys);
    return 0;
}

/* Storage for `need` events of k scores (the arrays grown as needed, up to CAPACITY events); 0 or -1 with an
 * exception. */
static int
class_rows_fit(ClassRows *self, Py_ssize_t k, Py_ssize_t need)
{
    if (self->n > 0 && k != self->k) {
        PyErr_Format(PyExc_RuntimeError, "an event of %zd scores in a buffer of events of %zd", k, self->k);
        return -1;
    }
    void **arrays[] = {(void **)&self->y, (void **)&self->pred, (void **)&self->weights};
    const size_t sizes[] = {sizeof(int64_t), sizeof(int64_t), sizeof(double)};
    if (grow_arrays(&self->cap, need, 3, arrays, sizes) < 0)
        return -1;
    if (k > self->cap_k || self->scap < self->cap) { /* the scores' block: cap events of cap_k scores */
        Py_ssize_t wide = k > self->cap_k ? k : self->cap_k;
        if (wide > 0) {
            double *grown = PyMem_Realloc(self->scores, (size_t)(self->cap * wide) * sizeof(double));
            if (grown == NULL) {
                PyErr_NoMemory();
                return -1;
            }
            self->scores = grown;
        }
        self->cap_k = wide;
        self->scap = self->cap;
    }
    self->k = k;
    return 0;
}

/* Room for one more event of k scores; 0 or -1 with an exception. */
static int
class_rows_room(ClassRows *self, Py_ssize_t k)
{
    if (class_rows_fit(self, k, self->n + 1) < 0)
        return -1;
    return room_for_one(&self->n, self->on_full);
}

/* Store one event: its class, its predicted class (-1: found when the buffer is counted), its k scores and its
 * weight. */
static PyObject *
class_rows_store(ClassRows *self, long label, long predicted, const double *row, Py_ssize_t k, double w)
{
    if (class_rows_room(self, k) < 0)
        return NULL;
    self->y[self->n] = label;
    self->pred[self->n] = predicted;
    if (k)
        memcpy(self->scores + self->n * k, row, k * sizeof(double));
    self->weights[self->n] = w;
    self->weighted |= w != 1.0;
    if (one_stored(&self->n, self->on_full) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *
ClassRows_update(ClassRows *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    double w = 1.0;
    int plain = kwnames == NULL && nargs == 2; /* (y, scores), or with a weight: a float third or as w= */
    if (!plain && self->index != NULL) {
        PyObject *weight = NULL;
        if (kwnames == NULL && nargs == 3)
            weight = args[2];
        else if (nargs == 2 && PyTuple_GET_SIZE(kwnames) == 1 &&
                 PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, 0), "w") == 0)
            weight = args[2];
        if (weight != NULL && PyFloat_CheckExact(weight)) {
            w = PyFloat_AS_DOUBLE(weight);
            plain = isfinite(w) && w >= 0.0 && w <= LARGE_WEIGHT; /* else the checked path explains or counts */
        }
    }
    if (plain && self->index != NULL && self->keys == NULL && !PyDict_Check(args[1]) && !PyList_Check(args[1]) &&
        !PyTuple_Check(args[1])) { /* a known class and a known predicted class */
        PyObject *hit = PyDict_GetItemWithError(self->index, args[0]);
        PyObject *pred = hit == NULL ? NULL : PyDict_GetItemWithError(self->index, args[1]);
        if (PyErr_Occurred())
            PyErr_Clear(); /* an unhashable label: the checked path explains */
        if (hit != NULL && pred != NULL) {
            long label = PyLong_AsLong(hit), predicted = PyLong_AsLong(pred);
            if ((label == -1 || predicted == -1) && PyErr_Occurred())
                return NULL;
            return class_rows_store(self, label, predicted, NULL, 0, w);
        }
    }
    if (plain && self->index != NULL && self->keys != NULL && PyDict_CheckExact(args[1])) {
        PyObject *scores = args[1];
        Py_ssize_t k = PyTuple_GET_SIZE(self->keys);
        PyObject *hit = PyDict_GetItemWithError(self->index, args[0]);
        if (hit == NULL && PyErr_Occurred())
            PyErr_Clear(); /* an unhashable label: the checked path explains */
        if (hit != NULL && PyDict_GET_SIZE(scores) == k && k <= 256) {
            double row[256];
            Py_ssize_t c;
            for (c = 0; c < k; c++) {
                PyObject *v = PyDict_GetItemWithError(scores, PyTuple_GET_ITEM(self->keys, c));
                if (v == NULL || !PyFloat_CheckExact(v))
                    break;
                row[c] = PyFloat_AS_DOUBLE(v);
                if (row[c] != row[c])
                    break;
            }
            if (PyErr_Occurred())
                PyErr_Clear();
            if (c == k) {
                long label = PyLong_AsLong(hit);
                if (label == -1 && PyErr_Occurred())
                    return NULL;
                return class_rows_store(self, label, -1, row, k, w);
            }
        }
    }
    return PyObject_Vectorcall(self->slow, args, nargsf, kwnames);
}

/* push(y_index, pred_index, scores (a tuple of floats, empty for predicted labels), w) */
static PyObject *
ClassRows_push(ClassRows *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 4 || !PyTuple_Check(args[2])) {
        PyErr_SetString(PyExc_TypeError, "push(y_index, pred_index, scores: tuple, w)");
        return NULL;
    }
    long y = PyLong_AsLong(args[0]);
    long pred = PyLong_AsLong(args[1]);
    double w = PyFloat_AsDouble(args[3]);
    if (PyErr_Occurred())
        return NULL;
    Py_ssize_t k = PyTuple_GET_SIZE(args[2]);
    double row[256];
    if (k > 256) {
        PyErr_SetString(PyExc_ValueError, "push: more than 256 scores an event");
        return NULL;
    }
    for (Py_ssize_t c = 0; c < k; c++) {
        row[c] = PyFloat_AsDouble(PyTuple_GET_ITEM(args[2], c));
        if (row[c] == -1.0 && PyErr_Occurred())
            return NULL;
    }
    return class_rows_store(self, y, pred, row, k, w);
}

/* push_many(y, pred, scores, k, weights=None): a small batch of checked events (int64 class and predicted class
 * indices, -1 for a predicted class found when counted; k float64 scores each, row by row; float64 weights, or
 * None for weights of 1), stored if every weight is in [0, LARGE_WEIGHT] (as update() stores one event) and they
 * fit in the buffer, after a flush of the events held when they do not fit beside them; whether they were. */
static PyObject *
ClassRows_push_many(ClassRows *self, PyObject *args)
{
    Py_buffer yb, pb, sb, wb = {0};
    Py_ssize_t k;
    PyObject *w_obj = Py_None;
    if (!PyArg_ParseTuple(args, "y*y*y*n|O", &yb, &pb, &sb, &k, &w_obj))
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t m = yb.len / 8;
    if (w_obj != Py_None && PyObject_GetBuffer(w_obj, &wb, PyBUF_SIMPLE) < 0) {
        wb.obj = NULL;
        goto done;
    }
    if (yb.len % 8 || pb.len != yb.len || k < 0 || k > 256 || sb.len != m * k * (Py_ssize_t)sizeof(double) ||
        (wb.obj != NULL && wb.len != yb.len)) {
        PyErr_SetString(PyExc_ValueError, "push_many: inconsistent arguments");
        goto done;
    }
    const double *w = wb.obj != NULL ? (const double *)wb.buf : NULL;
    int plain = 1;
    for (Py_ssize_t j = 0; w != NULL && j < m; j++)
        plain &= w[j] >= 0.0 && w[j] <= LARGE_WEIGHT; /* false for NaN too */
    int room = plain ? room_for_many(&self->n, m, self->on_full, NULL) : 0;
    if (room <= 0 || class_rows_fit(self, k, self->n + m) < 0) {
        result = room < 0 || PyErr_Occurred() ? NULL : Py_NewRef(Py_False);
        goto done;
    }
    memcpy(self->y + self->n, yb.buf, (size_t)m * 8);
    memcpy(self->pred + self->n, pb.buf, (size_t)m * 8);
    if (k)
        memcpy(self->scores + self->n * k, sb.buf, (size_t)(m * k) * sizeof(double));
    for (Py_ssize_t j = 0; j < m; j++) {
        self->weights[self->n + j] = w ? w[j] : 1.0;
        self->weighted |= w != NULL && w[j] != 1.0;
    }
    self->n += m;
    result = Py_NewRef(Py_True);
done:
    PyBuffer_Release(&yb);
    PyBuffer_Release(&pb);
    PyBuffer_Release(&sb);
    if (wb.obj != NULL)
        PyBuffer_Release(&wb);
    return result;
}

static PyObject *
ClassRows_set_classes(ClassRows *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2 ||
        (args[0] != Py_None && (!PyDict_CheckExact(args[0]) || (args[1] != Py_None && !PyTuple_Check(args[1]))))) {
        PyErr_SetString(PyExc_TypeError, "set_classes(index: dict or None, classes: tuple or None)");
        return NULL;
    }
    if (args[0] == Py_None) {
        Py_CLEAR(self->index);
        Py_CLEAR(self->keys);
    } else {
        Py_INCREF(args[0]);
        Py_XSETREF(self->index, args[0]);
        if (args[1] == Py_None) /* predicted classes */
            Py_CLEAR(self->keys);
        else {
            Py_INCREF(args[1]);
            Py_XSETREF(self->keys, args[1]);
        }
    }
    Py_RETURN_NONE;
}

static PyObject *
ClassRows_arrays(ClassRows *self, PyObject *Py_UNUSED(ignored))
{
    Py_ssize_t n = self->n;
    PyObject *w = Py_None;
    PyObject *y = PyBytes_FromStringAndSize(n ? (const char *)self->y : NULL, n * 8);
    PyObject *pred = PyBytes_FromStringAndSize(n ? (const char *)self->pred : NULL, n * 8);
    PyObject *scores = PyBytes_FromStringAndSize(n && self->k ? (const char *)self->scores : NULL,
                                                 n * self->k * (Py_ssize_t)sizeof(double));
    if (self->weighted)
        w = PyBytes_FromStringAndSize(n ? (const char *)self->weights : NULL, n * (Py_ssize_t)sizeof(double));
    else
        Py_INCREF(w);
    if (y == NULL || pred == NULL || scores == NULL || w == NULL) {
        Py_XDECREF(y);
        Py_XDECREF(pred);
        Py_XDECREF(scores);
        Py_XDECREF(w);
        return NULL;
    }
    return Py_BuildValue("NNNN", y, pred, scores, w);
}

static PyObject *
ClassRows_clear(ClassRows *self, PyObject *Py_UNUSED(ignored))
{
    self->n = 0;
    self->weighted = 0;
    Py_RETURN_NONE;
}

static Py_ssize_t
ClassRows_len(ClassRows *self)
{
    return self->n;
}

static PyMethodDef ClassRows_methods[] = {
    {"update", (PyCFunction)(void (*)(void))ClassRows_update, METH_FASTCALL | METH_KEYWORDS,
     "update(y, scores, w=1.0): store a known class and a dict of float scores of exactly the classes, "
     "or hand the call to `slow`."},
    {"push", (PyCFunction)(void (*)(void))ClassRows_push, METH_FASTCALL,
     "push(y_index, pred_index, scores, w): store one checked event (pred_index -1: found when counted)."},
    {"push_many", (PyCFunction)ClassRows_push_many, METH_VARARGS,
     "push_many(y, pred, scores, k) -> bool: store a small batch of checked unit-weight events, or nothing."},
    {"set_classes", (PyCFunction)(void (*)(void))ClassRows_set_classes, METH_FASTCALL,
     "set_classes(index, classes): the classes the fast path knows (None: no fast path; classes None: the\n"
     "events are a class and a predicted class, not scores)."},
    {"arrays", (PyCFunction)ClassRows_arrays, METH_NOARGS,
     "(y int64 bytes, pred int64 bytes, scores float64 bytes row by row, weights float64 bytes or None)."},
    {"clear", (PyCFunction)ClassRows_clear, METH_NOARGS, "Empty the buffer (once its events are counted)."},
    {NULL, NULL, 0, NULL},
};

static PySequenceMethods ClassRows_as_sequence = {
    .sq_length = (lenfunc)ClassRows_len,
};

static PyTypeObject ClassRowsType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "streameval._speedups.ClassRows",
    .tp_doc = "Per-event buffer of a MulticlassAccumulator (compiled).",
    .tp_basicsize = sizeof(ClassRows),
    .tp_itemsize = 0,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)ClassRows_init,
    .tp_dealloc = (destructor)ClassRows_dealloc,
    .tp_traverse = (traverseproc)ClassRows_traverse,
    .tp_clear = (inquiry)ClassRows_clear_refs,
    .tp_methods = ClassRows_methods,
    .tp_as_sequence = &ClassRows_as_sequence,
};


/* ------------------------------------------------------------------------ */
/* Event log of a sliding window                                             */
/* ------------------------------------------------------------------------ */

#define LOG_MAX_ARITY 8

/* The C function and object of a compiled update (a bound method of METH_FASTCALL | METH_KEYWORDS), to call
 * straight, without the method object's dispatch; NULL for any other callable. */
static _PyCFunctionFastWithKeywords
direct_update(PyObject *update, PyObject **self)
{
    *self = NULL;
    if (PyCFunction_Check(update) && PyCFunction_GET_FLAGS(update) == (METH_FASTCALL | METH_KEYWORDS) &&
        PyCFunction_GET_SELF(update) != NULL) {
        *self = PyCFunction_GET_SELF(update);
        return (_PyCFunctionFastWithKeywords)(void (*)(void))PyCFunction_GET_FUNCTION(update);
    }
    return NULL;
}

typedef union {
    double f;
    int64_t i;
    PyObject *o; /* a str or a dict, whose reference the log holds */
} LogValue;

#define LOG_HOLDS(TAG) ((TAG) == 's' || (TAG) == 'o') /* a column of objects, one reference each */

typedef struct {
    PyObject_HEAD
    PyObject *count_one; /* checks (and counts) an event the typed columns will hold, first */
    _PyCFunctionFastWithKeywords direct; /* count_one's C function when it is a compiled method, else NULL */
    PyObject *direct_self;               /* its object (count_one holds the reference) */
    PyObject *on_full;   /* called when `every` events are pending */
    PyObject *on_odd;    /* checks, counts and keeps an event the typed columns cannot hold */
    Py_ssize_t every;
    Py_ssize_t pending;  /* events since the last reset_pending(), typed or odd */
    Py_ssize_t n;        /* events in the typed columns */
    Py_ssize_t capacity[LOG_MAX_ARITY]; /* of each column */
    int odd;             /* 1: every event goes to on_odd until reset_pending() */
    int objects;         /* 1: dicts are kept too (a copy each), as the owner counts them at once */
    int arity;
    char tags[LOG_MAX_ARITY]; /* 'f' float, 'i' int, 'b' bool, 's' str, 'o' dict */
    LogValue *columns[LOG_MAX_ARITY];
} EventLog;

static int
EventLog_traverse(EventLog *self, visitproc visit, void *arg)
{
    Py_VISIT(self->count_one);
    Py_VISIT(self->on_full);
    Py_VISIT(self->on_odd);
    for (int k = 0; k < self->arity && self->n > 0; k++)
        if (self->tags[k] == 'o') /* dicts may refer back */
            for (Py_ssize_t r = 0; r < self->n; r++)
                Py_VISIT(self->columns[k][r].o);
    return 0;
}

static int
EventLog_clear_refs(EventLog *self)
{
    Py_CLEAR(self->count_one);
    Py_CLEAR(self->on_full);
    Py_CLEAR(self->on_odd);
    return 0;
}

/* Let go of the str and dict values the typed run holds, and empty it. */
static void
log_drop_objects(EventLog *self)
{
    for (int k = 0; k < self->arity && self->n > 0; k++)
        if (LOG_HOLDS(self->tags[k]))
            for (Py_ssize_t r = 0; r < self->n; r++)
                Py_DECREF(self->columns[k][r].o);
    self->n = 0;
}

static void
EventLog_dealloc(EventLog *self)
{
    PyObject_GC_UnTrack(self);
    EventLog_clear_refs(self);
    log_drop_objects(self);
    for (int k = 0; k < LOG_MAX_ARITY; k++)
        PyMem_Free(self->columns[k]);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int
EventLog_init(EventLog *self, PyObject *args, PyObject *kwds)
{
    PyObject *count_one, *on_full, *on_odd;
    Py_ssize_t every;
    int objects = 0;
    static char *kwlist[] = {"count_one", "on_full", "on_odd", "every", "objects", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOOn|p", kwlist, &count_one, &on_full, &on_odd, &every,
                                     &objects))
        return -1;
    if (every < 1) {
        PyErr_Format(PyExc_ValueError, "every must be at least 1, got %zd", every);
        return -1;
    }
    Py_INCREF(count_one);
    Py_INCREF(on_full);
    Py_INCREF(on_odd);
    Py_XSETREF(self->count_one, count_one);
    Py_XSETREF(self->on_full, on_full);
    Py_XSETREF(self->on_odd, on_odd);
    self->direct = direct_update(count_one, &self->direct_self);
    self->every = every;
    log_drop_objects(self); /* init called again: the run so far goes */
    self->objects = objects;
    self->pending = self->n = 0;
    self->odd = 0;
    self->arity = 0;
    return 0;
}

/* The tag of a value the typed columns can hold, or 0. */
static inline char
log_tag(PyObject *v, LogValue *out, int objects)
{
    if (PyFloat_CheckExact(v)) {
        out->f = PyFloat_AS_DOUBLE(v);
        return 'f';
    }
    if (PyBool_Check(v)) {
        out->i = v == Py_True;
        return 'b';
    }
    if (PyLong_CheckExact(v)) {
        int overflow;
        long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
        if (overflow || (x == -1 && PyErr_Occurred())) {
            PyErr_Clear();
            return 0;
        }
        out->i = (int64_t)x;
        return 'i';
    }
    if (PyUnicode_CheckExact(v)) { /* such as a segment's name: the log keeps a reference once it stores it */
        out->o = v;
        return 's';
    }
    if (objects && PyDict_CheckExact(v)) { /* such as a mapping of class scores: counted by count_one at once,
                                            * kept as a copy */
        out->o = v;
        return 'o';
    }
    return 0;
}

/* The copies of dicts among an event's first `count` values let go (the event is not kept). */
static void
log_drop_copies(const char *tags, LogValue *row, Py_ssize_t count)
{
    for (Py_ssize_t k = 0; k < count; k++)
        if (tags[k] == 'o')
            Py_DECREF(row[k].o);
}

/* Room for `need` values in each of the first `arity` columns (each grown by doubling, from 1024); -1 with
 * MemoryError set when one cannot grow (the columns keep what they hold). */
static int
log_room(EventLog *self, Py_ssize_t arity, Py_ssize_t need)
{
    for (Py_ssize_t k = 0; k < arity; k++) {
        if (self->capacity[k] >= need)
            continue;
        Py_ssize_t grown = self->capacity[k] ? self->capacity[k] : 1024;
        while (grown < need)
            grown *= 2;
        LogValue *c = PyMem_Realloc(self->columns[k], grown * sizeof(LogValue));
        if (c == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        self->columns[k] = c;
        self->capacity[k] = grown;
    }
    return 0;
}

static PyObject *
EventLog_update(EventLog *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    PyObject *r;
    int typed = !self->odd && kwnames == NULL && nargs >= 1 && nargs <= LOG_MAX_ARITY;
    LogValue row[LOG_MAX_ARITY];
    char tags[LOG_MAX_ARITY];
    if (typed) {
        for (Py_ssize_t k = 0; k < nargs; k++) {
            tags[k] = log_tag(args[k], &row[k], self->objects);
            if (tags[k] == 0) {
                typed = 0;
                break;
            }
        }
    }
    if (typed && self->n > 0 && (nargs != self->arity || memcmp(tags, self->tags, nargs) != 0))
        typed = 0; /* called otherwise than the run so far */
    if (typed && log_room(self, nargs, self->n + 1))
        return NULL; /* before the event is counted: nothing changed */
    if (typed) {
        /* a dict is kept as a copy of its own: the caller may fill the same dict again for the next event */
        for (Py_ssize_t k = 0; k < nargs; k++) {
            if (tags[k] != 'o')
                continue;
            row[k].o = PyDict_Copy(args[k]);
            if (row[k].o == NULL) {
                log_drop_copies(tags, row, k);
                return NULL; /* nothing counted, nothing stored */
            }
        }
        r = self->direct != NULL ? self->direct(self->direct_self, args, nargs, NULL)
                                 : PyObject_Vectorcall(self->count_one, args, nargsf, NULL);
        if (r == NULL) {
            log_drop_copies(tags, row, nargs);
            return NULL; /* refused: nothing stored */
        }
        Py_DECREF(r);
        if (self->n == 0) {
            self->arity = (int)nargs;
            memcpy(self->tags, tags, nargs);
        }
        for (Py_ssize_t k = 0; k < nargs; k++) {
            if (tags[k] == 's')
                Py_INCREF(row[k].o); /* a dict's copy is the log's already */
            self->columns[k][self->n] = row[k];
        }
        self->n++;
    } else {
        r = PyObject_Vectorcall(self->on_odd, args, nargsf, kwnames);
        if (r == NULL)
            return NULL;
        Py_DECREF(r);
    }
    self->pending++;
    if (self->pending >= self->every) {
        r = PyObject_CallNoArgs(self->on_full);
        if (r == NULL)
            return NULL;
        Py_DECREF(r);
    }
    Py_RETURN_NONE;
}

/* take() -> list of (tag, bytes) per column of the typed run, (tag, list) for a column of str or dict; the run
 * is emptied (on an error, nothing is taken). */
static PyObject *
EventLog_take(EventLog *self, PyObject *Py_UNUSED(ignored))
{
    PyObject *out = PyList_New(0);
    if (out == NULL || self->n == 0)
        return out;
    for (int k = 0; k < self->arity; k++) {
        PyObject *item;
        if (LOG_HOLDS(self->tags[k])) {
            PyObject *values = PyList_New(self->n);
            if (values != NULL)
                for (Py_ssize_t r = 0; r < self->n; r++)
                    PyList_SET_ITEM(values, r, Py_NewRef(self->columns[k][r].o));
            item = values == NULL ? NULL : Py_BuildValue("CN", self->tags[k], values);
        }
        else
            item = Py_BuildValue("Cy#", self->tags[k], (const char *)self->columns[k],
                                 (Py_ssize_t)(self->n * sizeof(LogValue)));
        if (item == NULL || PyList_Append(out, item) < 0) {
            Py_XDECREF(item);
            Py_DECREF(out);
            return NULL;
        }
        Py_DECREF(item);
    }
    log_drop_objects(self); /* the lists hold their own references */
    return out;
}

/* The log's tag of a batch's column held in `view`: 'b' for bools, 'f' for float64, 'i' for int64 (native
 * order, 1-D), else 0. */
static char
log_column_tag(const Py_buffer *view)
{
    const char *f = view->format == NULL ? "B" : view->format;
    if (*f == '@' || *f == '=' || (*f == '<' && PY_LITTLE_ENDIAN))
        f++;
    if (view->ndim != 1 || f[0] == '\0' || f[1] != '\0')
        return 0;
    if (f[0] == '?' && view->itemsize == 1)
        return 'b';
    if (f[0] == 'd' && view->itemsize == 8)
        return 'f';
    if ((f[0] == 'l' || f[0] == 'q') && view->itemsize == 8)
        return 'i';
    return 0;
}

/* keep_many(columns) -> bool: a batch's events kept after the typed run, as if each had been called (not
 * counted: the caller counts the batch). Only 1-D C-contiguous arrays of bools, float64 or int64, as many
 * as the run's arguments and of its tags (or any, on an empty run), while the log is not sending events to
 * on_odd; else False with nothing changed. Raises MemoryError, with nothing kept, when the columns cannot grow. */
static PyObject *
EventLog_keep_many(EventLog *self, PyObject *columns)
{
    if (!PyTuple_Check(columns)) {
        PyErr_SetString(PyExc_TypeError, "keep_many: columns must be a tuple");
        return NULL;
    }
    Py_ssize_t arity = PyTuple_GET_SIZE(columns), n = -1;
    if (self->odd || arity < 1 || arity > LOG_MAX_ARITY)
        Py_RETURN_FALSE;
    Py_buffer views[LOG_MAX_ARITY];
    char tags[LOG_MAX_ARITY];
    int held = 0, ok = 1;
    for (Py_ssize_t k = 0; k < arity && ok; k++) {
        PyObject *c = PyTuple_GET_ITEM(columns, k);
        if (!PyObject_CheckBuffer(c) || PyObject_GetBuffer(c, &views[k], PyBUF_FORMAT | PyBUF_C_CONTIGUOUS) < 0) {
            PyErr_Clear();
            ok = 0;
            break;
        }
        held++;
        tags[k] = log_column_tag(&views[k]);
        ok = tags[k] != 0 && (n < 0 || views[k].shape[0] == n);
        if (ok)
            n = views[k].shape[0];
    }
    ok = ok && (self->n == 0 || (arity == self->arity && memcmp(tags, self->tags, (size_t)arity) == 0));
    if (ok && log_room(self, arity, self->n + n)) { /* room for all of them first: nothing kept on a failure */
        for (int h = 0; h < held; h++)
            PyBuffer_Release(&views[h]);
        return NULL;
    }
    if (ok) {
        for (Py_ssize_t k = 0; k < arity; k++) {
            LogValue *out = self->columns[k] + self->n;
            if (tags[k] == 'f')
                memcpy(out, views[k].buf, (size_t)n * sizeof(double));
            else if (tags[k] == 'i')
                memcpy(out, views[k].buf, (size_t)n * sizeof(int64_t));
            else
                for (Py_ssize_t r = 0; r < n; r++)
                    out[r].i = ((const uint8_t *)views[k].buf)[r] != 0;
        }
        if (self->n == 0) {
            self->arity = (int)arity;
            memcpy(self->tags, tags, (size_t)arity);
        }
        self->n += n;
        self->pending += n;
    }
    for (int h = 0; h < held; h++)
        PyBuffer_Release(&views[h]);
    return PyBool_FromLong(ok);
}

/* drop_last(count): the typed run's last `count` events let go (a batch kept by keep_many that its owner then
 * refused), and as many fewer pending. */
static PyObject *
EventLog_drop_last(EventLog *self, PyObject *arg)
{
    Py_ssize_t count = PyLong_AsSsize_t(arg);
    if (count == -1 && PyErr_Occurred())
        return NULL;
    if (count < 0 || count > self->n || count > self->pending) {
        PyErr_Format(PyExc_ValueError, "drop_last: count must be in [0, %zd], got %zd", self->n, count);
        return NULL;
    }
    for (int k = 0; k < self->arity; k++)
        if (LOG_HOLDS(self->tags[k]))
            for (Py_ssize_t r = self->n - count; r < self->n; r++)
                Py_DECREF(self->columns[k][r].o);
    self->n -= count;
    self->pending -= count;
    Py_RETURN_NONE;
}

static PyObject *
EventLog_reset_pending(EventLog *self, PyObject *Py_UNUSED(ignored))
{
    self->pending = 0;
    self->odd = 0;
    Py_RETURN_NONE;
}

static PyObject *
EventLog_retarget(EventLog *self, PyObject *count_one)
{
    Py_INCREF(count_one);
    Py_XSETREF(self->count_one, count_one);
    self->direct = direct_update(count_one, &self->direct_self);
    Py_RETURN_NONE;
}

static PyObject *
EventLog_set_odd(EventLog *self, PyObject *Py_UNUSED(ignored))
{
    self->odd = 1;
    Py_RETURN_NONE;
}

static PyMemberDef EventLog_members[] = {
    {"pending", T_PYSSIZET, offsetof(EventLog, pending), READONLY, "Events since the last reset_pending()."},
    {"typed", T_PYSSIZET, offsetof(EventLog, n), READONLY, "Events in the typed run (take() empties it)."},
    {NULL, 0, 0, 0, NULL},
};

static PyMethodDef EventLog_methods[] = {
    {"update", (PyCFunction)(void (*)(void))EventLog_update, METH_FASTCALL | METH_KEYWORDS,
     "update(*args, **kwargs): plain float, int and bool arguments counted by count_one, then kept in "
     "typed columns; any other call handed to on_odd."},
    {"take", (PyCFunction)EventLog_take, METH_NOARGS,
     "The typed run as a list of (tag, bytes) per argument ('f' float64, 'i' int64, 'b' bool as int64); "
     "the run is emptied."},
    {"reset_pending", (PyCFunction)EventLog_reset_pending, METH_NOARGS,
     "Start counting pending events from 0, and store typed events again."},
    {"retarget", (PyCFunction)EventLog_retarget, METH_O, "Count the typed events with another update from now on."},
    {"keep_many", (PyCFunction)EventLog_keep_many, METH_O,
     "keep_many(columns) -> bool: a batch's events (a tuple of 1-D arrays of bools, float64 or int64, as the run's "
     "arguments) kept after the typed run, not counted; False, with nothing changed, where it cannot be."},
    {"drop_last", (PyCFunction)EventLog_drop_last, METH_O,
     "drop_last(count): the typed run's last count events let go (a kept batch refused after)."},
    {"set_odd", (PyCFunction)EventLog_set_odd, METH_NOARGS,
     "Send every event to on_odd until reset_pending() (keeps the order of a run on_odd holds)."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject EventLogType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "streameval._speedups.EventLog",
    .tp_doc = "Per-event log of a sliding window (compiled).",
    .tp_basicsize = sizeof(EventLog),
    .tp_itemsize = 0,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)EventLog_init,
    .tp_dealloc = (destructor)EventLog_dealloc,
    .tp_traverse = (traverseproc)EventLog_traverse,
    .tp_clear = (inquiry)EventLog_clear_refs,
    .tp_methods = EventLog_methods,
    .tp_members = EventLog_members,
};


/* ------------------------------------------------------------------------ */
/* Pane router of a time window                                              */
/* ------------------------------------------------------------------------ */

typedef struct {
    PyObject_HEAD
    PyObject *slow;    /* update(*args, t=..., **kwargs) of the window: every other event */
    PyObject *target;  /* the latest pane's update, or NULL */
    double pane_width;
    double pane;       /* the latest pane's number */
} PaneRouter;

static PyObject *str_t;
static PyObject *w_names;  /* ("w",): a weight passed on */
static PyObject *t_names;  /* ("t",): a time passed on */
static PyObject *tw_names; /* ("t", "w"): both */

/* Where t= is among an event's keywords when they are exactly t= or t= and w= (either order): 0 or 1, with w=
 * (or NULL) in *w_obj; -1 for any other keywords. */
static inline int
time_and_weight(PyObject *const *kwvalues, PyObject *kwnames, PyObject **w_obj)
{
    Py_ssize_t nkw = PyTuple_GET_SIZE(kwnames);
    PyObject *first = PyTuple_GET_ITEM(kwnames, 0);
    *w_obj = NULL;
    if (nkw == 1)
        return first == str_t ? 0 : -1;
    if (nkw != 2)
        return -1;
    PyObject *second = PyTuple_GET_ITEM(kwnames, 1);
    if (first == str_t && second == str_w) {
        *w_obj = kwvalues[1];
        return 0;
    }
    if (first == str_w && second == str_t) {
        *w_obj = kwvalues[0];
        return 1;
    }
    return -1;
}

/* The two references every router starts with (PaneRouter, DecayRouter, SegmentRouter: the same layout first),
 * visited, cleared and released by one set of functions. */
typedef struct {
    PyObject_HEAD
    PyObject *first;
    PyObject *second;
} RouterRefs;

static int
Router_traverse(PyObject *self, visitproc visit, void *arg)
{
    Py_VISIT(((RouterRefs *)self)->first);
    Py_VISIT(((RouterRefs *)self)->second);
    return 0;
}

static int
Router_clear_refs(PyObject *self)
{
    Py_CLEAR(((RouterRefs *)self)->first);
    Py_CLEAR(((RouterRefs *)self)->second);
    return 0;
}

static void
Router_dealloc(PyObject *self)
{
    PyObject_GC_UnTrack(self);
    Router_clear_refs(self);
    Py_TYPE(self)->tp_free(self);
}

/* func(*args[:nargs], **{kwnames: (v0, v1)}): the arguments of an event passed on with one or two keyword values
 * (v1 read only for two names); a stack of at most LOG_MAX_ARITY positional arguments (the callers check). */
static PyObject *
call_with_keywords(PyObject *func, PyObject *const *args, Py_ssize_t nargs, PyObject *v0, PyObject *v1,
                   PyObject *kwnames)
{
    PyObject *stack[LOG_MAX_ARITY + 2];
    for (Py_ssize_t k = 0; k < nargs; k++)
        stack[k] = args[k];
    stack[nargs] = v0;
    stack[nargs + 1] = v1;
    return PyObject_Vectorcall(func, stack, (size_t)nargs, kwnames);
}

static int
PaneRouter_init(PaneRouter *self, PyObject *args, PyObject *kwds)
{
    PyObject *slow;
    double width;
    static char *kwlist[] = {"slow", "pane_width", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "Od", kwlist, &slow, &width))
        return -1;
    if (!(width > 0) || !isfinite(width)) {
        PyErr_Format(PyExc_ValueError, "pane_width must be positive and finite, got %R", PyTuple_GET_ITEM(args, 1));
        return -1;
    }
    Py_INCREF(slow);
    Py_XSETREF(self->slow, slow);
    Py_CLEAR(self->target);
    self->pane_width = width;
    return 0;
}

static PyObject *
PaneRouter_update(PaneRouter *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    PyObject *w_obj;
    int t_at = self->target != NULL && kwnames != NULL ? time_and_weight(args + nargs, kwnames, &w_obj) : -1;
    double t;
    if (t_at >= 0 && finite_value(args[nargs + t_at], &t) == 0 && floor(t / self->pane_width) == self->pane) {
        if (w_obj == NULL)
            return PyObject_Vectorcall(self->target, args, (size_t)nargs, NULL);
        if (nargs < LOG_MAX_ARITY) /* the weight passed on, as the window's own path passes it */
            return call_with_keywords(self->target, args, nargs, w_obj, NULL, w_names);
    }
    return PyObject_Vectorcall(self->slow, args, nargsf, kwnames);
}

static PyObject *
PaneRouter_point(PaneRouter *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "point(pane: int, update or None)");
        return NULL;
    }
    if (args[1] == Py_None) {
        Py_CLEAR(self->target);
        Py_RETURN_NONE;
    }
    double pane = PyFloat_AsDouble(args[0]);
    if (pane == -1.0 && PyErr_Occurred())
        return NULL;
    Py_INCREF(args[1]);
    Py_XSETREF(self->target, args[1]);
    self->pane = pane;
    Py_RETURN_NONE;
}

static PyMethodDef PaneRouter_methods[] = {
    {"update", (PyCFunction)(void (*)(void))PaneRouter_update, METH_FASTCALL | METH_KEYWORDS,
     "update(*args, t, w=...): an event of the latest pane straight to its update (with its w=, if any), any other "
     "to the window's."},
    {"point", (PyCFunction)(void (*)(void))PaneRouter_point, METH_FASTCALL,
     "point(pane, update): the latest pane and its accumulator's update (None: no fast path)."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject PaneRouterType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "streameval._speedups.PaneRouter",
    .tp_doc = "Per-event router of a time window (compiled).",
    .tp_basicsize = sizeof(PaneRouter),
    .tp_itemsize = 0,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)PaneRouter_init,
    .tp_dealloc = (destructor)Router_dealloc,
    .tp_traverse = (traverseproc)Router_traverse,
    .tp_clear = (inquiry)Router_clear_refs,
    .tp_methods = PaneRouter_methods,
};


/* ------------------------------------------------------------------------ */
/* Decay router of a window decayed by time                                  */
/* ------------------------------------------------------------------------ */

typedef struct {
    PyObject_HEAD
    PyObject *slow;     /* update(*args, t=..., w=..., **kwargs) of the window: every other event */
    PyObject *target;   /* the state's update, or NULL: every event to slow */
    double half_life;
    double rescale_at;  /* the exponent (t - t_ref) / half_life past which slow rescales the state */
    double t_ref;       /* the time at which a stored weight is the event's own */
    double latest;      /* the latest event time counted (-inf before any) */
    long long events;   /* events counted */
} DecayRouter;


static int
DecayRouter_init(DecayRouter *self, PyObject *args, PyObject *kwds)
{
    PyObject *slow;
    double half_life, rescale_at;
    static char *kwlist[] = {"slow", "half_life", "rescale_at", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "Odd", kwlist, &slow, &half_life, &rescale_at))
        return -1;
    if (!(half_life > 0) || !isfinite(half_life)) {
        PyErr_Format(PyExc_ValueError, "half_life must be positive and finite, got %R", PyTuple_GET_ITEM(args, 1));
        return -1;
    }
    Py_INCREF(slow);
    Py_XSETREF(self->slow, slow);
    Py_CLEAR(self->target);
    self->half_life = half_life;
    self->rescale_at = rescale_at;
    self->t_ref = 0.0;
    self->latest = -INFINITY;
    self->events = 0;
    return 0;
}

static PyObject *
DecayRouter_update(DecayRouter *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    PyObject *w_obj;
    int t_at = self->target != NULL && kwnames != NULL && nargs < LOG_MAX_ARITY
                   ? time_and_weight(args + nargs, kwnames, &w_obj)
                   : -1;
    double t, w = 1.0;
    if (t_at >= 0 && finite_value(args[nargs + t_at], &t) == 0 &&
        (w_obj == NULL || (finite_value(w_obj, &w) == 0 && w >= 0.0))) {
        double top = t > self->latest ? t : self->latest;
        double weight = w * pow(2.0, (t - self->t_ref) / self->half_life);
        if ((top - self->t_ref) / self->half_life <= self->rescale_at && isfinite(weight)) {
            PyObject *decayed = PyFloat_FromDouble(weight);
            if (decayed == NULL)
                return NULL;
            PyObject *target = Py_NewRef(self->target); /* held through the call, whatever it re-points */
            PyObject *res = call_with_keywords(target, args, nargs, decayed, NULL, w_names);
            Py_DECREF(target);
            Py_DECREF(decayed);
            if (res == NULL) { /* refused by the state, nothing counted: the window's own path decides (a total past
                                * the largest float at this reference may fit once it rescales) */
                if (!PyErr_ExceptionMatches(PyExc_ValueError))
                    return NULL;
                PyErr_Clear();
                return PyObject_Vectorcall(self->slow, args, nargsf, kwnames);
            }
            if (t > self->latest)
                self->latest = t;
            self->events++;
            return res;
        }
    }
    return PyObject_Vectorcall(self->slow, args, nargsf, kwnames);
}

static PyObject *
DecayRouter_point(DecayRouter *self, PyObject *target)
{
    if (target == Py_None) {
        Py_CLEAR(self->target);
    } else {
        Py_INCREF(target);
        Py_XSETREF(self->target, target);
    }
    Py_RETURN_NONE;
}

static PyMethodDef DecayRouter_methods[] = {
    {"update", (PyCFunction)(void (*)(void))DecayRouter_update, METH_FASTCALL | METH_KEYWORDS,
     "update(*args, t, w=1.0): an event at a finite time with a finite weight >= 0 that does not rescale the "
     "state, and whose decayed weight is finite, straight to the state's update with that weight; any other to "
     "the window's."},
    {"point", (PyCFunction)DecayRouter_point, METH_O,
     "point(update): the state's update (None: every event to the window's)."},
    {NULL, NULL, 0, NULL},
};

static PyMemberDef DecayRouter_members[] = {
    {"half_life", T_DOUBLE, offsetof(DecayRouter, half_life), READONLY, "the half-life"},
    {"rescale_at", T_DOUBLE, offsetof(DecayRouter, rescale_at), READONLY, "the exponent past which slow counts"},
    {"t_ref", T_DOUBLE, offsetof(DecayRouter, t_ref), 0, "the time at which a stored weight is the event's own"},
    {"latest", T_DOUBLE, offsetof(DecayRouter, latest), 0, "the latest event time counted"},
    {"events", T_LONGLONG, offsetof(DecayRouter, events), 0, "events counted"},
    {NULL, 0, 0, 0, NULL},
};

static PyTypeObject DecayRouterType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "streameval._speedups.DecayRouter",
    .tp_doc = "Per-event router of a window decayed by time (compiled).",
    .tp_basicsize = sizeof(DecayRouter),
    .tp_itemsize = 0,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)DecayRouter_init,
    .tp_dealloc = (destructor)Router_dealloc,
    .tp_traverse = (traverseproc)Router_traverse,
    .tp_clear = (inquiry)Router_clear_refs,
    .tp_methods = DecayRouter_methods,
    .tp_members = DecayRouter_members,
};


/* ------------------------------------------------------------------------ */
/* Segment router of a segmented accumulator                                 */
/* ------------------------------------------------------------------------ */

typedef struct {
    PyObject_HEAD
    PyObject *slow;    /* update(segment, *event, **kwargs) of the segmented accumulator: every other event */
    PyObject *routes;  /* dict: a segment (exactly a str or an int) -> its accumulator's update */
} SegmentRouter;

#define SAME_HEAD(T, A, B)                                                                                  \
    _Static_assert(offsetof(T, A) == offsetof(RouterRefs, first) && offsetof(T, B) == offsetof(RouterRefs, second), \
                   #T " starts as RouterRefs")
SAME_HEAD(PaneRouter, slow, target);
SAME_HEAD(DecayRouter, slow, target);
SAME_HEAD(SegmentRouter, slow, routes);

static int
SegmentRouter_init(SegmentRouter *self, PyObject *args, PyObject *kwds)
{
    PyObject *slow, *routes;
    static char *kwlist[] = {"slow", "routes", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OO!", kwlist, &slow, &PyDict_Type, &routes))
        return -1;
    Py_INCREF(slow);
    Py_XSETREF(self->slow, slow);
    Py_INCREF(routes);
    Py_XSETREF(self->routes, routes);
    return 0;
}

static PyObject *
SegmentRouter_update(SegmentRouter *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (nargs >= 1 && (PyUnicode_CheckExact(args[0]) || PyLong_CheckExact(args[0]))) {
        PyObject *target = PyDict_GetItemWithError(self->routes, args[0]); /* borrowed */
        if (target != NULL) {
            Py_INCREF(target); /* the call may change the routes */
            PyObject *out = PyObject_Vectorcall(target, args + 1, (size_t)(nargs - 1), kwnames);
            Py_DECREF(target);
            return out;
        }
        if (PyErr_Occurred())
            return NULL;
    }
    return PyObject_Vectorcall(self->slow, args, nargsf, kwnames);
}

static PyMethodDef SegmentRouter_methods[] = {
    {"update", (PyCFunction)(void (*)(void))SegmentRouter_update, METH_FASTCALL | METH_KEYWORDS,
     "update(segment, *event, **kwargs): an event of a routed segment straight to its update, any other to the "
     "segmented accumulator's."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject SegmentRouterType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "streameval._speedups.SegmentRouter",
    .tp_doc = "Per-event router of a segmented accumulator (compiled).",
    .tp_basicsize = sizeof(SegmentRouter),
    .tp_itemsize = 0,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)SegmentRouter_init,
    .tp_dealloc = (destructor)Router_dealloc,
    .tp_traverse = (traverseproc)Router_traverse,
    .tp_clear = (inquiry)Router_clear_refs,
    .tp_methods = SegmentRouter_methods,
};


/* ------------------------------------------------------------------------ */
/* Event counter of a monitor                                                */
/* ------------------------------------------------------------------------ */

typedef struct {
    PyObject_HEAD
    PyObject *count_one; /* the monitored accumulator's update */
    PyObject *on_due;    /* called when `events` reaches `due` */
    PyObject *slow;      /* every call the counter does not take (see update) */
    _PyCFunctionFastWithKeywords direct; /* count_one's C function when it is a compiled method, else NULL */
    PyObject *direct_self;               /* its object (count_one holds the reference) */
    Py_ssize_t events;
    Py_ssize_t due;
    int by_time;      /* records are due by time: an event before next_time straight, any other to slow (with
                       * pass_time, events come with t=) */
    int pass_time;    /* t= passed on to count_one (as a float) */
    double next_time; /* by time, the time of the next record (NaN: not set, every event to slow) */
} EventCounter;

static int
EventCounter_traverse(EventCounter *self, visitproc visit, void *arg)
{
    Py_VISIT(self->count_one);
    Py_VISIT(self->on_due);
    Py_VISIT(self->slow);
    return 0;
}

static int
EventCounter_clear_refs(EventCounter *self)
{
    Py_CLEAR(self->count_one);
    Py_CLEAR(self->on_due);
    Py_CLEAR(self->slow);
    return 0;
}

static void
EventCounter_dealloc(EventCounter *self)
{
    PyObject_GC_UnTrack(self);
    EventCounter_clear_refs(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int
EventCounter_init(EventCounter *self, PyObject *args, PyObject *kwds)
{
    PyObject *count_one, *on_due, *slow;
    Py_ssize_t due;
    int by_time = 0, pass_time = 0;
    static char *kwlist[] = {"count_one", "on_due", "slow", "due", "by_time", "pass_time", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOOn|pp", kwlist, &count_one, &on_due, &slow, &due, &by_time,
                                     &pass_time))
        return -1;
    Py_INCREF(count_one);
    Py_INCREF(on_due);
    Py_INCREF(slow);
    Py_XSETREF(self->count_one, count_one);
    Py_XSETREF(self->on_due, on_due);
    Py_XSETREF(self->slow, slow);
    /* a compiled update (a bound method of METH_FASTCALL | METH_KEYWORDS) is called straight, without the
     * method object's dispatch */
    self->direct = direct_update(count_one, &self->direct_self);
    self->events = 0;
    self->due = due;
    self->by_time = by_time;
    self->pass_time = pass_time;
    self->next_time = NAN;
    return 0;
}

/* count_one(*args): through its C function when it is a compiled method */
static inline PyObject *
EventCounter_count(EventCounter *self, PyObject *const *args, size_t nargsf)
{
    return self->direct != NULL ? self->direct(self->direct_self, args, PyVectorcall_NARGS(nargsf), NULL)
                                : PyObject_Vectorcall(self->count_one, args, nargsf, NULL);
}

static PyObject *
EventCounter_update(EventCounter *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    int timed = self->by_time || self->pass_time; /* events come with t= (and w=) */
    if ((kwnames == NULL) == timed)
        return PyObject_Vectorcall(self->slow, args, nargsf, kwnames);
    PyObject *r;
    if (timed) { /* t a finite float or int, before the next record's time when by time */
        double t;
        PyObject *w_obj;
        int t_at = time_and_weight(args + nargs, kwnames, &w_obj);
        if (t_at < 0 || nargs >= LOG_MAX_ARITY || finite_value(args[nargs + t_at], &t) != 0 ||
            (self->by_time && !(t < self->next_time)))
            return PyObject_Vectorcall(self->slow, args, nargsf, kwnames);
        if (self->pass_time) { /* the window reads the time as the monitor read it: a float */
            PyObject *t_obj = args[nargs + t_at];
            PyObject *when = PyFloat_CheckExact(t_obj) ? Py_NewRef(t_obj) : PyFloat_FromDouble(t);
            if (when == NULL)
                return NULL;
            r = call_with_keywords(self->count_one, args, nargs, when, w_obj, w_obj == NULL ? t_names : tw_names);
            Py_DECREF(when);
        }
        else if (w_obj != NULL)
            r = call_with_keywords(self->count_one, args, nargs, w_obj, NULL, w_names);
        else
            r = EventCounter_count(self, args, (size_t)nargs);
    }
    else
        r = EventCounter_count(self, args, nargsf);
    if (r == NULL)
        return NULL;
    Py_DECREF(r);
    self->events++;
    if (!self->by_time && self->events >= self->due) {
        r = PyObject_CallNoArgs(self->on_due);
        if (r == NULL)
            return NULL;
        Py_DECREF(r);
    }
    Py_RETURN_NONE;
}

static PyMemberDef EventCounter_members[] = {
    {"events", T_PYSSIZET, offsetof(EventCounter, events), 0, "Events counted."},
    {"due", T_PYSSIZET, offsetof(EventCounter, due), 0, "The count at which on_due is called."},
    {"next_time", T_DOUBLE, offsetof(EventCounter, next_time), 0,
     "By time, the time of the next record: an event before it is counted straight (NaN: none is)."},
    {NULL, 0, 0, 0, NULL},
};

static PyMethodDef EventCounter_methods[] = {
    {"update", (PyCFunction)(void (*)(void))EventCounter_update, METH_FASTCALL | METH_KEYWORDS,
     "update(*args): count_one(*args), then on_due() when `events` reaches `due`; keywords go to `slow`. "
     "Timed (by_time or pass_time), update(*args, t, w=...): a finite float or int t (before next_time, by time) "
     "counted with count_one(*args, t=float(t)) (pass_time) or count_one(*args), with w= passed on; anything "
     "else to `slow`."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject EventCounterType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "streameval._speedups.EventCounter",
    .tp_doc = "Per-event counter of a monitor (compiled).",
    .tp_basicsize = sizeof(EventCounter),
    .tp_itemsize = 0,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)EventCounter_init,
    .tp_dealloc = (destructor)EventCounter_dealloc,
    .tp_traverse = (traverseproc)EventCounter_traverse,
    .tp_clear = (inquiry)EventCounter_clear_refs,
    .tp_methods = EventCounter_methods,
    .tp_members = EventCounter_members,
};


/* ------------------------------------------------------------------------ */
/* A method of a Locked accumulator                                          */
/* ------------------------------------------------------------------------ */

/* call(*args, **kwargs): acquire(), then the method `name` of `inner` as `inner` has it at this call, then
 * release() whatever the call did, as the twin's try/finally (threads.Locked): the lock's own methods, called
 * from here without a Python frame around them. */
typedef struct {
    PyObject_HEAD
    PyObject *acquire;
    PyObject *release;
    PyObject *inner;
    PyObject *name;
    PyObject *doc;
    vectorcallfunc vectorcall;
} LockedCall;

static int
LockedCall_traverse(LockedCall *self, visitproc visit, void *arg)
{
    Py_VISIT(self->acquire);
    Py_VISIT(self->release);
    Py_VISIT(self->inner);
    Py_VISIT(self->name);
    Py_VISIT(self->doc);
    return 0;
}

static int
LockedCall_clear_refs(LockedCall *self)
{
    Py_CLEAR(self->acquire);
    Py_CLEAR(self->release);
    Py_CLEAR(self->inner);
    Py_CLEAR(self->name);
    Py_CLEAR(self->doc);
    return 0;
}

static void
LockedCall_dealloc(LockedCall *self)
{
    PyObject_GC_UnTrack(self);
    LockedCall_clear_refs(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *
LockedCall_call(LockedCall *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    if (self->acquire == NULL) {
        PyErr_SetString(PyExc_TypeError, "LockedCall: not initialised");
        return NULL;
    }
    PyObject *r = PyObject_CallNoArgs(self->acquire);
    if (r == NULL)
        return NULL;
    Py_DECREF(r);
    /* the method called as inner.name(...) calls it, without a bound method object: inner, then the arguments,
     * after one free slot (PY_VECTORCALL_ARGUMENTS_OFFSET) */
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    Py_ssize_t total = nargs + (kwnames != NULL ? PyTuple_GET_SIZE(kwnames) : 0);
    PyObject *small[10], **stack = small;
    if (total + 2 > 10) {
        stack = PyMem_Malloc((size_t)(total + 2) * sizeof(PyObject *));
        if (stack == NULL)
            PyErr_NoMemory();
    }
    PyObject *result = NULL;
    if (stack != NULL) {
        stack[1] = self->inner;
        if (total)
            memcpy(stack + 2, args, (size_t)total * sizeof(PyObject *));
        result = PyObject_VectorcallMethod(self->name, stack + 1, (size_t)(nargs + 1) | PY_VECTORCALL_ARGUMENTS_OFFSET,
                                           kwnames);
        if (stack != small)
            PyMem_Free(stack);
    }
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb); /* the call's error waits while the lock is released */
    r = PyObject_CallNoArgs(self->release);
    if (r == NULL) { /* the release's error replaces the call's, which becomes its context (a finally clause's) */
        Py_XDECREF(result);
        if (type != NULL) {
            PyErr_NormalizeException(&type, &value, &tb);
            if (tb != NULL)
                PyException_SetTraceback(value, tb);
            PyObject *type2, *value2, *tb2;
            PyErr_Fetch(&type2, &value2, &tb2);
            PyErr_NormalizeException(&type2, &value2, &tb2);
            PyException_SetContext(value2, value); /* steals value */
            Py_DECREF(type);
            Py_XDECREF(tb);
            PyErr_Restore(type2, value2, tb2);
        }
        return NULL;
    }
    Py_DECREF(r);
    PyErr_Restore(type, value, tb);
    return result;
}

static int
LockedCall_init(LockedCall *self, PyObject *args, PyObject *kwds)
{
    PyObject *acquire, *release, *inner, *name, *doc;
    static char *kwlist[] = {"acquire", "release", "inner", "name", "doc", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOOUO", kwlist, &acquire, &release, &inner, &name, &doc))
        return -1;
    Py_INCREF(acquire);
    Py_INCREF(release);
    Py_INCREF(inner);
    Py_INCREF(name);
    Py_INCREF(doc);
    Py_XSETREF(self->acquire, acquire);
    Py_XSETREF(self->release, release);
    Py_XSETREF(self->inner, inner);
    Py_XSETREF(self->name, name);
    Py_XSETREF(self->doc, doc);
    self->vectorcall = (vectorcallfunc)LockedCall_call;
    return 0;
}

static PyObject *
LockedCall_get_name(LockedCall *self, void *Py_UNUSED(closure))
{
    return Py_NewRef(self->name != NULL ? self->name : Py_None);
}

static PyObject *
LockedCall_get_doc(LockedCall *self, void *Py_UNUSED(closure))
{
    return Py_NewRef(self->doc != NULL ? self->doc : Py_None);
}

static PyGetSetDef LockedCall_getset[] = {
    {"__name__", (getter)LockedCall_get_name, NULL, "The method's name.", NULL},
    {"__doc__", (getter)LockedCall_get_doc, NULL, "The method's docstring.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject LockedCallType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "streameval._speedups.LockedCall",
    .tp_basicsize = sizeof(LockedCall),
    .tp_itemsize = 0,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)LockedCall_init,
    .tp_dealloc = (destructor)LockedCall_dealloc,
    .tp_traverse = (traverseproc)LockedCall_traverse,
    .tp_clear = (inquiry)LockedCall_clear_refs,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(LockedCall, vectorcall),
    .tp_getset = LockedCall_getset,
};


/* ------------------------------------------------------------------------ */
/* Cell tally of a paired accumulator                                        */
/* ------------------------------------------------------------------------ */

/* update(y, pred_a, pred_b[, w]) of a PairedAccumulator: one plain unit-weight event counted in place in the
 * 2 x 2 x 2 table of whole counts, the cell [y][A's prediction][B's prediction]. Plain means, as in the twin
 * PairedAccumulator._cell: labels exactly int, bool or str found in `sides` (label -> 0 or 1); with a
 * threshold, predictions exactly float, np.float64 or int (not NaN, an int within float's range) compared as
 * floats with `score >= threshold`; a weight exactly the float or int 1. Every other call, and every call while
 * no table of whole counts is set, goes to `slow`, which checks it and explains a refusal. */
typedef struct {
    PyObject_HEAD
    PyObject *slow;     /* the accumulator's checked path */
    PyObject *sides;    /* dict: plain label -> 0 or 1 (empty: labels are not plain) */
    PyObject *float64;  /* numpy.float64, a plain score type */
    Py_buffer table;    /* the 8 int64 counts, while table.obj != NULL */
    double threshold;
    int scores;         /* predictions are scores */
} CellTally;

static int
CellTally_traverse(CellTally *self, visitproc visit, void *arg)
{
    Py_VISIT(self->slow);
    Py_VISIT(self->sides);
    Py_VISIT(self->float64);
    Py_VISIT(self->table.obj);
    return 0;
}

static int
CellTally_clear_refs(CellTally *self)
{
    if (self->table.obj != NULL)
        PyBuffer_Release(&self->table);
    Py_CLEAR(self->slow);
    Py_CLEAR(self->sides);
    Py_CLEAR(self->float64);
    return 0;
}

static void
CellTally_dealloc(CellTally *self)
{
    PyObject_GC_UnTrack(self);
    CellTally_clear_refs(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int
CellTally_init(CellTally *self, PyObject *args, PyObject *kwds)
{
    PyObject *slow, *sides, *threshold, *float64;
    static char *kwlist[] = {"slow", "sides", "threshold", "float64", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OO!OO", kwlist, &slow, &PyDict_Type, &sides, &threshold, &float64))
        return -1;
    double t = 0.0;
    if (threshold != Py_None) {
        t = PyFloat_AsDouble(threshold);
        if (t == -1.0 && PyErr_Occurred())
            return -1;
    }
    CellTally_clear_refs(self);
    Py_INCREF(slow);
    Py_INCREF(sides);
    Py_INCREF(float64);
    self->slow = slow;
    self->sides = sides;
    self->float64 = float64;
    self->threshold = t;
    self->scores = threshold != Py_None;
    return 0;
}

PyDoc_STRVAR(CellTally_target_doc,
"target(table) -> None\n\n"
"Count into `table` (a writable C-contiguous array of 8 int64 counts) from now on; any other table (weighted\n"
"float counts, or None) sends every event to `slow`.");

static PyObject *
CellTally_target(CellTally *self, PyObject *table)
{
    if (self->table.obj != NULL)
        PyBuffer_Release(&self->table);
    if (table == Py_None)
        Py_RETURN_NONE;
    if (PyObject_GetBuffer(table, &self->table, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) {
        PyErr_Clear(); /* not a writable contiguous table: every event to `slow` */
        self->table.obj = NULL;
        Py_RETURN_NONE;
    }
    const char *f = self->table.format;
    int whole = self->table.itemsize == 8 && self->table.len == 64 && f != NULL &&
                (f[0] == 'q' || f[0] == 'l' || ((f[0] == '<' || f[0] == '=') && (f[1] == 'q' || f[1] == 'l') &&
                                                f[2] == '\0'));
    if (!whole || ((uintptr_t)self->table.buf % sizeof(int64_t)) != 0)
        PyBuffer_Release(&self->table); /* sets table.obj to NULL */
    Py_RETURN_NONE;
}

/* 0 or 1: the side of a plain label; -1: not plain, or not one of the two (the checked path explains) */
static int
cell_side(PyObject *sides, PyObject *label)
{
    if (!(PyLong_CheckExact(label) || PyBool_Check(label) || PyUnicode_CheckExact(label)))
        return -1;
    PyObject *side = PyDict_GetItemWithError(sides, label); /* borrowed */
    if (side == NULL) {
        PyErr_Clear();
        return -1;
    }
    return side == Py_True || (PyLong_CheckExact(side) && PyLong_AsLong(side) == 1) ? 1 : 0;
}

/* 0 or 1: a plain score's prediction (score >= threshold); -1: not a plain score */
static int
cell_prediction(CellTally *self, PyObject *score)
{
    double v;
    if (PyFloat_CheckExact(score) || (PyObject *)Py_TYPE(score) == self->float64)
        v = PyFloat_AS_DOUBLE(score);
    else if (PyLong_CheckExact(score)) {
        v = PyLong_AsDouble(score);
        if (v == -1.0 && PyErr_Occurred()) { /* beyond float's range */
            PyErr_Clear();
            return -1;
        }
    }
    else
        return -1;
    if (v != v)
        return -1;
    return v >= self->threshold;
}

static int
unit_weight(PyObject *w)
{
    if (PyFloat_CheckExact(w))
        return PyFloat_AS_DOUBLE(w) == 1.0;
    if (PyLong_CheckExact(w)) {
        int overflow;
        return PyLong_AsLongAndOverflow(w, &overflow) == 1 && !overflow;
    }
    return 0;
}

static PyObject *
CellTally_update(CellTally *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (kwnames != NULL || self->table.obj == NULL || nargs < 3 || nargs > 4 || (nargs == 4 && !unit_weight(args[3])))
        return PyObject_Vectorcall(self->slow, args, nargsf, kwnames);
    int t = cell_side(self->sides, args[0]);
    int a = self->scores ? cell_prediction(self, args[1]) : cell_side(self->sides, args[1]);
    int b = self->scores ? cell_prediction(self, args[2]) : cell_side(self->sides, args[2]);
    if (t < 0 || a < 0 || b < 0)
        return PyObject_Vectorcall(self->slow, args, nargsf, kwnames);
    ((int64_t *)self->table.buf)[t * 4 + a * 2 + b] += 1;
    Py_RETURN_NONE;
}

static PyMethodDef CellTally_methods[] = {
    {"update", (PyCFunction)(void (*)(void))CellTally_update, METH_FASTCALL | METH_KEYWORDS,
     "update(y, pred_a, pred_b, w=1.0): a plain unit-weight event counted in its cell; anything else to `slow`."},
    {"target", (PyCFunction)CellTally_target, METH_O, CellTally_target_doc},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject CellTallyType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "streameval._speedups.CellTally",
    .tp_doc = "Per-event path of a paired accumulator (compiled).",
    .tp_basicsize = sizeof(CellTally),
    .tp_itemsize = 0,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)CellTally_init,
    .tp_dealloc = (destructor)CellTally_dealloc,
    .tp_traverse = (traverseproc)CellTally_traverse,
    .tp_clear = (inquiry)CellTally_clear_refs,
    .tp_methods = CellTally_methods,
};


/* ------------------------------------------------------------------------ */
/* Predicted classes of a batch of class scores                              */
/* ------------------------------------------------------------------------ */

/* The column of row[0:k]'s highest value (no NaN), ties going to the lowest rank. Two passes over the row,
 * which stays in cache: its maximum in column order, then the lowest rank among the columns equal to it. With
 * GCC or Clang both passes run on vectors of four doubles (a compare and a blend, no branch; the second pass
 * looks at single columns only in a group of eight holding the maximum). Rows of ARGMAX_VECTOR_FROM columns
 * or more take it: at 150 columns and beyond, 0.5 ns a score against 0.7 to 1.6 ns for one scan in label
 * order with a branch per column (1.2 ns at 1,000 columns); shorter rows take that scan, which is faster
 * there (0.5 against 1.6 ns at 16 columns, 4.5 against 19 ms for 10^6 rows of 10). */
#define ARGMAX_VECTOR_FROM 128
#if defined(__GNUC__) || defined(__clang__)
typedef double Doubles4 __attribute__((vector_size(32)));
typedef int64_t Mask4 __attribute__((vector_size(32)));

/* four doubles from p, aligned or not (a statement expression: no vector crosses a call) */
#define doubles4_at(p)                 \
    __extension__({                    \
        Doubles4 v_;                   \
        memcpy(&v_, (p), sizeof v_);   \
        v_;                            \
    })

VECTOR_CLONES static int64_t
argmax_in_order(const double *restrict row, const int64_t *restrict rank, Py_ssize_t k)
{
    double top = row[0];
    Py_ssize_t j = 0;
    if (k >= 8) {
        Doubles4 m0 = doubles4_at(row), m1 = doubles4_at(row + 4);
        for (j = 8; j + 8 <= k; j += 8) {
            Doubles4 v0 = doubles4_at(row + j), v1 = doubles4_at(row + j + 4);
            Mask4 g0 = v0 > m0, g1 = v1 > m1;
            m0 = (Doubles4)(((Mask4)v0 & g0) | ((Mask4)m0 & ~g0));
            m1 = (Doubles4)(((Mask4)v1 & g1) | ((Mask4)m1 & ~g1));
        }
        for (int l = 0; l < 4; l++) {
            top = m0[l] > top ? m0[l] : top;
            top = m1[l] > top ? m1[l] : top;
        }
    }
    for (; j < k; j++)
        top = row[j] > top ? row[j] : top;
    int64_t best = 0, best_rank = INT64_MAX;
    Doubles4 t = {top, top, top, top};
    for (j = 0; j + 8 <= k; j += 8) {
        Mask4 hit = (doubles4_at(row + j) == t) | (doubles4_at(row + j + 4) == t);
        if ((hit[0] | hit[1] | hit[2] | hit[3]) == 0)
            continue;
        for (Py_ssize_t c = j; c < j + 8; c++) {
            if (row[c] == top && rank[c] < best_rank) {
                best_rank = rank[c];
                best = c;
            }
        }
    }
    for (; j < k; j++) {
        if (row[j] == top && rank[j] < best_rank) {
            best_rank = rank[j];
            best = j;
        }
    }
    return best;
}
#else
static int64_t
argmax_in_order(const double *row, const int64_t *rank, Py_ssize_t k)
{
    double top = row[0];
    for (Py_ssize_t j = 1; j < k; j++)
        top = row[j] > top ? row[j] : top;
    int64_t best = 0, best_rank = INT64_MAX;
    for (Py_ssize_t j = 0; j < k; j++) {
        if (row[j] == top && rank[j] < best_rank) {
            best_rank = rank[j];
            best = j;
        }
    }
    return best;
}
#endif

PyDoc_STRVAR(row_argmax_doc,
"row_argmax(scores, order, pred) -> None\n\n"
"The column of the highest score of each row of a C-ordered float64 matrix with len(order) columns and no NaN,\n"
"ties going to the column first in `order` (int64), written into `pred` (int64, one per row).");

static PyObject *
row_argmax(PyObject *Py_UNUSED(module), PyObject *args)
{
    Py_buffer scores, order, pred;
    if (!PyArg_ParseTuple(args, "y*y*w*", &scores, &order, &pred))
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t k = order.len / (Py_ssize_t)sizeof(int64_t);
    Py_ssize_t n = pred.len / (Py_ssize_t)sizeof(int64_t);
    if (k < 1 || order.len % 8 || pred.len % 8 || scores.len != n * k * (Py_ssize_t)sizeof(double)) {
        PyErr_SetString(PyExc_ValueError, "row_argmax: inconsistent arguments");
        goto done;
    }
    const int64_t *ord = (const int64_t *)order.buf;
    int64_t *rank = PyMem_Malloc((size_t)k * sizeof(int64_t)); /* rank[column]: its place in `order` */
    if (rank == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t j = 0; j < k; j++)
        rank[j] = -1;
    for (Py_ssize_t j = 0; j < k; j++) {
        if (ord[j] < 0 || ord[j] >= k || rank[ord[j]] >= 0) {
            PyMem_Free(rank);
            PyErr_SetString(PyExc_ValueError, "row_argmax: order must hold each column number once");
            goto done;
        }
        rank[ord[j]] = j;
    }
    const double *xs = (const double *)scores.buf;
    int64_t *out = (int64_t *)pred.buf;
    Py_BEGIN_ALLOW_THREADS
    if (k >= ARGMAX_VECTOR_FROM) {
        for (Py_ssize_t i = 0; i < n; i++)
            out[i] = argmax_in_order(xs + i * k, rank, k);
    }
    else {
        for (Py_ssize_t i = 0; i < n; i++) {
            const double *row = xs + i * k;
            int64_t best = ord[0];
            double top = row[best];
            for (Py_ssize_t j = 1; j < k; j++) {
                if (row[ord[j]] > top) {
                    top = row[ord[j]];
                    best = ord[j];
                }
            }
            out[i] = best;
        }
    }
    Py_END_ALLOW_THREADS
    PyMem_Free(rank);
    result = Py_None;
    Py_INCREF(result);
done:
    PyBuffer_Release(&scores);
    PyBuffer_Release(&order);
    PyBuffer_Release(&pred);
    return result;
}

PyDoc_STRVAR(dict_rows_doc,
"dict_rows(rows, order, float64, out) -> bool\n\n"
"The scores of a list of dicts as a matrix: row i, column j of `out` (C-ordered float64, len(rows) x\n"
"len(order)) is rows[i][order[j]]. True when every row is a dict of exactly len(order) keys holding each class\n"
"of `order` with a float or `float64` score that is not NaN; False at the first row that is not (`out` then\n"
"holds anything): the caller's numpy path decides those, and gives the same matrix for the others.");

static PyObject *
dict_rows(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *rows, *order, *float64;
    Py_buffer out;
    if (!PyArg_ParseTuple(args, "O!O!Ow*", &PyList_Type, &rows, &PyList_Type, &order, &float64, &out))
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t n = PyList_GET_SIZE(rows), k = PyList_GET_SIZE(order);
    if (out.len != n * k * (Py_ssize_t)sizeof(double)) {
        PyErr_SetString(PyExc_ValueError, "dict_rows: out must hold len(rows) x len(order) floats");
        goto done;
    }
    double *o = (double *)out.buf;
    int plain = 1;
    for (Py_ssize_t i = 0; plain && i < n; i++) {
        /* a key's __eq__ may run Python code: the row and the list are read again, holding references */
        if (i >= PyList_GET_SIZE(rows) || k != PyList_GET_SIZE(order)) {
            plain = 0;
            break;
        }
        PyObject *row = PyList_GET_ITEM(rows, i);
        if (!PyDict_CheckExact(row) || PyDict_GET_SIZE(row) != k) {
            plain = 0;
            break;
        }
        Py_INCREF(row);
        for (Py_ssize_t j = 0; j < k; j++) {
            if (k != PyList_GET_SIZE(order)) {
                plain = 0;
                break;
            }
            PyObject *key = PyList_GET_ITEM(order, j);
            Py_INCREF(key);
            PyObject *v = PyDict_GetItemWithError(row, key); /* borrowed */
            Py_DECREF(key);
            if (v == NULL) {
                if (PyErr_Occurred()) {
                    Py_DECREF(row);
                    goto done;
                }
                plain = 0;
                break;
            }
            if (!PyFloat_CheckExact(v) && (PyObject *)Py_TYPE(v) != float64) {
                plain = 0;
                break;
            }
            double d = PyFloat_AS_DOUBLE(v);
            if (d != d) {
                plain = 0;
                break;
            }
            o[i * k + j] = d;
        }
        Py_DECREF(row);
    }
    result = PyBool_FromLong(plain);
done:
    PyBuffer_Release(&out);
    return result;
}

PyDoc_STRVAR(object_codes_doc,
"object_codes(values, codes) -> list or None\n\n"
"The distinct values of a list of exact str and int objects in order of first appearance, each value's index\n"
"into them written into `codes` (int64, as long as the list); None, with `codes` holding anything, when a value\n"
"is of another type (the caller's plain path codes those).");

#define OBJECT_CODES_RECENT 8

static PyObject *
object_codes(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *values;
    Py_buffer cb;
    if (!PyArg_ParseTuple(args, "O!w*", &PyList_Type, &values, &cb))
        return NULL;
    PyObject *result = NULL, *index = NULL, *uniques = NULL;
    Py_ssize_t n = PyList_GET_SIZE(values);
    if (cb.len != n * (Py_ssize_t)sizeof(int64_t)) {
        PyErr_SetString(PyExc_ValueError, "object_codes: codes must hold one int64 a value");
        goto done;
    }
    int64_t *codes = (int64_t *)cb.buf;
    index = PyDict_New();
    uniques = PyList_New(0);
    if (index == NULL || uniques == NULL)
        goto done;
    /* the objects met last and their codes: a value that is one of them (the same object, as a stream's few
     * segment names mostly are) takes its code without hashing (10,000 of 4 str segments: 17 against 172 us);
     * the list holds each object until the call ends */
    PyObject *recent[OBJECT_CODES_RECENT] = {NULL};
    int64_t recent_code[OBJECT_CODES_RECENT] = {0};
    int next_recent = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *v = PyList_GET_ITEM(values, i);
        int r = 0;
        while (r < OBJECT_CODES_RECENT && recent[r] != v)
            r++;
        if (r < OBJECT_CODES_RECENT) {
            codes[i] = recent_code[r];
            continue;
        }
        /* exact str and int hash and compare in C: no Python code runs, the list cannot change under us */
        if (!PyUnicode_CheckExact(v) && !PyLong_CheckExact(v)) {
            result = Py_None;
            Py_INCREF(result);
            goto done;
        }
        PyObject *code = PyDict_GetItemWithError(index, v); /* borrowed */
        if (code != NULL) {
            codes[i] = (int64_t)PyLong_AsSsize_t(code);
            recent[next_recent] = v;
            recent_code[next_recent] = codes[i];
            next_recent = (next_recent + 1) % OBJECT_CODES_RECENT;
            continue;
        }
        if (PyErr_Occurred())
            goto done;
        Py_ssize_t k = PyList_GET_SIZE(uniques);
        code = PyLong_FromSsize_t(k);
        if (code == NULL)
            goto done;
        int failed = PyDict_SetItem(index, v, code) < 0 || PyList_Append(uniques, v) < 0;
        Py_DECREF(code);
        if (failed)
            goto done;
        codes[i] = (int64_t)k;
        recent[next_recent] = v;
        recent_code[next_recent] = codes[i];
        next_recent = (next_recent + 1) % OBJECT_CODES_RECENT;
    }
    result = uniques;
    uniques = NULL;
done:
    Py_XDECREF(index);
    Py_XDECREF(uniques);
    PyBuffer_Release(&cb);
    return result;
}

PyDoc_STRVAR(score_columns_doc,
"score_columns(scores, k, start, stop, first, last, out, stride) -> None\n\n"
"Columns first:last of rows start:stop of a C-ordered float64 matrix with k columns, written column by column\n"
"into `out` (float64, at least (last - first - 1) * stride + stop - start; column j from out[(j - first) *\n"
"stride]): the scores of one class become contiguous. Eight rows at a time, so each column gets a whole cache\n"
"line; a stride that is not a power of two keeps the columns' lines in different cache sets.");

/* Columns 0 to width - 1 of m rows of k scores (row-major, from xs) written column by column into cols, each
 * column `stride` apart. */
static void
write_columns(const double *xs, Py_ssize_t k, Py_ssize_t m, Py_ssize_t width, double *cols, Py_ssize_t stride)
{
    Py_ssize_t whole = m - m % 8;
    for (Py_ssize_t i0 = 0; i0 < whole; i0 += 8) { /* 8 rows: one whole cache line of each column */
        const double *r = xs + i0 * k;
        double *col = cols + i0;
        for (Py_ssize_t j = 0; j < width; j++, col += stride) {
            col[0] = r[j];
            col[1] = r[k + j];
            col[2] = r[2 * k + j];
            col[3] = r[3 * k + j];
            col[4] = r[4 * k + j];
            col[5] = r[5 * k + j];
            col[6] = r[6 * k + j];
            col[7] = r[7 * k + j];
        }
    }
    for (Py_ssize_t i = whole; i < m; i++) {
        for (Py_ssize_t j = 0; j < width; j++)
            cols[j * stride + i] = xs[i * k + j];
    }
}

static PyObject *
score_columns(PyObject *Py_UNUSED(module), PyObject *args)
{
    Py_buffer scores, out;
    Py_ssize_t k, start, stop, first, last, stride;
    if (!PyArg_ParseTuple(args, "y*nnnnnw*n", &scores, &k, &start, &stop, &first, &last, &out, &stride))
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t rows = k > 0 ? scores.len / (Py_ssize_t)sizeof(double) / k : 0;
    Py_ssize_t m = stop - start, width = last - first;
    if (k < 1 || scores.len != rows * k * (Py_ssize_t)sizeof(double) || start < 0 || stop < start || stop > rows ||
        first < 0 || last > k || width < 1 || stride < m ||
        out.len < ((width - 1) * stride + m) * (Py_ssize_t)sizeof(double)) {
        PyErr_SetString(PyExc_ValueError, "score_columns: inconsistent arguments");
        goto done;
    }
    const double *xs = (const double *)scores.buf + start * k + first;
    double *cols = (double *)out.buf;
    Py_BEGIN_ALLOW_THREADS
    write_columns(xs, k, m, width, cols, stride);
    Py_END_ALLOW_THREADS
    result = Py_None;
    Py_INCREF(result);
done:
    PyBuffer_Release(&scores);
    PyBuffer_Release(&out);
    return result;
}

/* ------------------------------------------------------------------------ */
/* Segments of a batch: codes of small integers, events grouped by code      */
/* ------------------------------------------------------------------------ */

#define SMALL_CODES_RANGE (1 << 20) /* integer segments spread over at most this many values */

PyDoc_STRVAR(small_codes_doc,
"small_codes(values, width, codes) -> (distinct, counts) or None\n\n"
"The codes of signed integers (`width` bytes each) spread over at most 2^20 values, in order of first\n"
"appearance, written into `codes` (int32, one per value); returns the distinct values in that order and the\n"
"number of values of each (int64 bytes each). None, with `codes` untouched, when they spread wider.");

static int64_t
read_int(const char *p, int width)
{
    switch (width) {
    case 1: return *(const int8_t *)p;
    case 2: { int16_t v; memcpy(&v, p, 2); return v; }
    case 4: { int32_t v; memcpy(&v, p, 4); return v; }
    default: { int64_t v; memcpy(&v, p, 8); return v; }
    }
}

/* The smallest and largest of n > 0 signed integers of one width (a loop the compiler vectorises). */
#define INT_RANGE(NAME, T)                                                                                  \
    VECTOR_CLONES static void NAME(const T *restrict v, Py_ssize_t n, int64_t *lo, int64_t *hi)             \
    {                                                                                                         \
        T a = v[0], b = v[0];                                                                                 \
        for (Py_ssize_t i = 1; i < n; i++) {                                                                  \
            a = v[i] < a ? v[i] : a;                                                                          \
            b = v[i] > b ? v[i] : b;                                                                          \
        }                                                                                                     \
        *lo = a;                                                                                              \
        *hi = b;                                                                                              \
    }
INT_RANGE(int64_range, int64_t)
INT_RANGE(int32_range, int32_t)
INT_RANGE(int16_range, int16_t)
INT_RANGE(int8_range, int8_t)

/* The smallest and largest of n > 0 signed integers of `width` bytes (1, 2, 4 or 8: int_count's widths). */
static void
int_range(const char *vs, int width, Py_ssize_t n, int64_t *lo, int64_t *hi)
{
    if (width == 8)
        int64_range((const int64_t *)vs, n, lo, hi);
    else if (width == 4)
        int32_range((const int32_t *)vs, n, lo, hi);
    else if (width == 2)
        int16_range((const int16_t *)vs, n, lo, hi);
    else
        int8_range((const int8_t *)vs, n, lo, hi);
}

/* How many integers of `width` bytes (1, 2, 4 or 8) `len` bytes hold; -1 for another width or a torn one. */
static Py_ssize_t
int_count(Py_ssize_t len, int width)
{
    return (width == 1 || width == 2 || width == 4 || width == 8) && len % width == 0 ? len / width : -1;
}

/* How many values n signed integers of `width` bytes spread over (largest - smallest + 1; 0 when n is 0), the
 * smallest in *lo; -1 when SMALL_CODES_RANGE or more. */
static Py_ssize_t
small_span(const char *vs, int width, Py_ssize_t n, int64_t *lo)
{
    int64_t hi = 0;
    *lo = 0;
    if (n == 0)
        return 0;
    int_range(vs, width, n, lo, &hi);
    return (uint64_t)hi - (uint64_t)*lo >= SMALL_CODES_RANGE ? -1 : (Py_ssize_t)(hi - *lo) + 1;
}

static PyObject *
small_codes(PyObject *Py_UNUSED(module), PyObject *args)
{
    Py_buffer values, codes;
    int width;
    if (!PyArg_ParseTuple(args, "y*iw*", &values, &width, &codes))
        return NULL;
    PyObject *result = NULL;
    int32_t *lut = NULL;
    int64_t *distinct = NULL, *counts = NULL;
    Py_ssize_t n = int_count(values.len, width);
    if (n < 0 || codes.len != n * (Py_ssize_t)sizeof(int32_t)) {
        PyErr_SetString(PyExc_ValueError, "small_codes: inconsistent arguments");
        goto done;
    }
    const char *vs = (const char *)values.buf;
    int64_t lo = 0;
    Py_ssize_t span = small_span(vs, width, n, &lo);
    if (span < 0) {
        result = Py_NewRef(Py_None);
        goto done;
    }
    span = span > 0 ? span : 1;
    lut = PyMem_Malloc((size_t)span * sizeof(int32_t));
    distinct = PyMem_Malloc((size_t)span * sizeof(int64_t));
    counts = PyMem_Calloc((size_t)span * 4, sizeof(int64_t)); /* four interleaved tallies: no chain through memory */
    if (lut == NULL || distinct == NULL || counts == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t v = 0; v < span; v++)
        lut[v] = -1;
    int32_t *out = (int32_t *)codes.buf;
    Py_ssize_t found = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        int64_t v = width == 8 ? ((const int64_t *)vs)[i] : read_int(vs + i * width, width);
        int32_t c = lut[v - lo];
        if (c < 0) {
            c = lut[v - lo] = (int32_t)found;
            distinct[found++] = v;
        }
        out[i] = c;
        counts[(i & 3) * span + c] += 1;
    }
    for (Py_ssize_t c = 0; c < found; c++)
        counts[c] += counts[span + c] + counts[2 * span + c] + counts[3 * span + c];
    result = Py_BuildValue("(y#y#)", (const char *)distinct, found * (Py_ssize_t)sizeof(int64_t),
                           (const char *)counts, found * (Py_ssize_t)sizeof(int64_t));
done:
    PyMem_Free(lut);
    PyMem_Free(distinct);
    PyMem_Free(counts);
    PyBuffer_Release(&values);
    PyBuffer_Release(&codes);
    return result;
}

/* ------------------------------------------------------------------------ */
/* Batches of several segments counted in place                               */
/* ------------------------------------------------------------------------ */

PyDoc_STRVAR(group_lookup_doc,
"group_lookup(values, width, prefix) -> (distinct, lo, lookup, appearing) or None\n\n"
"The groups of signed integer values (`width` bytes each) when they spread over fewer than 2^20 values (None\n"
"otherwise): the distinct values in ascending order (int64 bytes), the smallest value, and a table (int32\n"
"bytes) holding the group of each value - lo, or -1 for values absent, then one -1 more (where values outside\n"
"the range look), then the distinct values again in order of first appearance. Read from the first `prefix`\n"
"values, unless one of eight values sampled evenly after them (the last among them) has no group there: then\n"
"from all of them (values sorted or in blocks, whose later groups the prefix does not show). One pass, no\n"
"codes, stopping once every value of the range is seen.");

#define LOOKUP_RUN 64 /* values group_lookup looks at whole: all one value seen before, skipped */

/* The lookup of group_lookup from values[0:n]: span (-1 past SMALL_CODES_RANGE), lo, and in lut (span + 1
 * int32, allocated here) 0 for each value seen, -1 else; appearing (span + 1 int64, allocated here) the values
 * in order of first appearance, `found` of them. Returns -1 without memory (an exception set). */
static int
lookup_of(const char *vs, int width, Py_ssize_t n, Py_ssize_t *span, int64_t *lo, int32_t **lut, int64_t **appearing,
          Py_ssize_t *found)
{
    *span = small_span(vs, width, n, lo);
    *found = 0;
    if (*span < 0)
        return 0;
    *lut = PyMem_Malloc((size_t)(*span + 1) * sizeof(int32_t)); /* and -1 past the end: where other values look */
    *appearing = PyMem_Malloc((size_t)(*span + 1) * sizeof(int64_t));
    if (*lut == NULL || *appearing == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    int32_t *t = *lut;
    for (Py_ssize_t v = 0; v <= *span; v++)
        t[v] = -1;
    Py_ssize_t k = 0;
    for (Py_ssize_t i = 0; i < n && k < *span;) { /* every value of the range seen: the rest are too */
        if (i + LOOKUP_RUN <= n) { /* a run of one value seen already (values sorted, or in blocks): skipped */
            uint64_t differ = 0;
            int64_t first;
#define LOOKUP_SAME(T)                                                                                      \
    {                                                                                                         \
        const T *b = (const T *)vs + i;                                                                       \
        first = b[0];                                                                                         \
        for (int j = 1; j < LOOKUP_RUN; j++)                                                                  \
            differ |= (uint64_t)(b[j] ^ b[0]);                                                                \
    }
            if (width == 8)
                LOOKUP_SAME(int64_t)
            else if (width == 4)
                LOOKUP_SAME(int32_t)
            else if (width == 2)
                LOOKUP_SAME(int16_t)
            else
                LOOKUP_SAME(int8_t)
#undef LOOKUP_SAME
            if (differ == 0 && t[first - *lo] >= 0) {
                i += LOOKUP_RUN;
                continue;
            }
        }
        Py_ssize_t stop = i + LOOKUP_RUN < n ? i + LOOKUP_RUN : n;
        for (; i < stop && k < *span; i++) {
            int64_t v = width == 8 ? ((const int64_t *)vs)[i] : read_int(vs + i * width, width);
            if (t[v - *lo] < 0) { /* rare: the first event of a group */
                t[v - *lo] = 0;
                (*appearing)[k++] = v;
            }
        }
    }
    *found = k;
    return 0;
}

static PyObject *
group_lookup(PyObject *Py_UNUSED(module), PyObject *args)
{
    Py_buffer values;
    int width;
    Py_ssize_t prefix;
    if (!PyArg_ParseTuple(args, "y*in", &values, &width, &prefix))
        return NULL;
    PyObject *result = NULL;
    int32_t *lut = NULL;
    int64_t *distinct = NULL, *appearing = NULL;
    Py_ssize_t n_all = int_count(values.len, width), n = n_all;
    if (n >= 0 && prefix >= 0 && prefix < n)
        n = prefix;
    if (n < 0 || prefix < 0) {
        PyErr_SetString(PyExc_ValueError, "group_lookup: inconsistent arguments");
        goto done;
    }
    const char *vs = (const char *)values.buf;
    int64_t lo = 0;
    Py_ssize_t span, found;
    if (lookup_of(vs, width, n, &span, &lo, &lut, &appearing, &found))
        goto done;
    int missed = 0; /* a later value the prefix gives no group: the batch's groups are read from all of it */
    for (int at = 1; span >= 0 && n < n_all && at <= 8; at++) {
        int64_t v = read_int(vs + (n + (n_all - n - 1) * at / 8) * width, width);
        missed |= (uint64_t)v - (uint64_t)lo >= (uint64_t)span || lut[v - lo] < 0;
    }
    if (missed) {
        PyMem_Free(lut);
        PyMem_Free(appearing);
        lut = NULL;
        appearing = NULL;
        if (lookup_of(vs, width, n_all, &span, &lo, &lut, &appearing, &found))
            goto done;
    }
    if (span < 0) {
        result = Py_NewRef(Py_None);
        goto done;
    }
    distinct = PyMem_Malloc((size_t)(span + 1) * sizeof(int64_t));
    if (distinct == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    found = 0;
    for (Py_ssize_t v = 0; v < span; v++) /* groups numbered in ascending order of their values */
        if (lut[v] == 0) {
            lut[v] = (int32_t)found;
            distinct[found++] = lo + v;
        }
    result = Py_BuildValue("(y#Ly#y#)", (const char *)distinct, found * (Py_ssize_t)sizeof(int64_t), (long long)lo,
                           (const char *)lut, (span + 1) * (Py_ssize_t)sizeof(int32_t), (const char *)appearing,
                           found * (Py_ssize_t)sizeof(int64_t));
done:
    PyMem_Free(lut);
    PyMem_Free(distinct);
    PyMem_Free(appearing);
    PyBuffer_Release(&values);
    return result;
}

/* The groups of events [i, i + m): lookup[value - lo]; nonzero when a value is not in the table. A value
 * outside the range reads the lookup's last entry, -1: the loop has no branch (and vectorises). */
#define GROUPS_LOOP(READ)                                                                  \
    for (Py_ssize_t j = 0; j < m; j++) {                                                   \
        uint64_t at = (uint64_t)(READ) - (uint64_t)lo;                                     \
        int32_t t = lut[at < span ? at : span];                                            \
        bad |= (uint32_t)t >= (uint32_t)k;                                                 \
        out[j] = t;                                                                        \
    }

VECTOR_CLONES static int
groups_chunk(const char *groups, int width, Py_ssize_t i, Py_ssize_t m, int64_t lo, const int32_t *restrict lut,
             uint64_t span, int32_t k, int32_t *restrict out)
{
    uint32_t bad = 0;
    if (width == 8 && lut == NULL) { /* every value of the range is a group, in order: value - lo */
        const int64_t *v = (const int64_t *)groups + i;
        for (Py_ssize_t j = 0; j < m; j++) {
            uint64_t at = (uint64_t)v[j] - (uint64_t)lo;
            bad |= at >= span;
            out[j] = (int32_t)at;
        }
    }
    else if (width == 8) {
        const int64_t *v = (const int64_t *)groups + i;
        GROUPS_LOOP(v[j])
    }
    else if (width == 4) {
        const int32_t *v = (const int32_t *)groups + i;
        GROUPS_LOOP(v[j])
    }
    else if (width == 2) {
        const int16_t *v = (const int16_t *)groups + i;
        GROUPS_LOOP(v[j])
    }
    else {
        const int8_t *v = (const int8_t *)groups + i;
        GROUPS_LOOP((int64_t)v[j])
    }
    return bad != 0;
}

/* The lookup itself, or NULL when it maps every value of the range to its group in order (0, 1, ...): for
 * groups_chunk, which then reads int64 values' groups without it. */
static const int32_t *
lookup_or_null(const int32_t *lut, uint64_t span)
{
    for (uint64_t v = 0; v < span; v++)
        if (lut[v] != (int32_t)v)
            return lut;
    return NULL;
}

#define GROUPED_IN_PLACE_UP_TO 4096 /* groups of one batch counted in place at most */
#define GROUPED_DENSE_UP_TO (1 << 18) /* (group, page) pairs up to this many: a table of them; past it, a hash map */

/* The arguments the grouped functions share: the events' groups through a lookup table. */
typedef struct {
    Py_buffer values, lut;
    int width;
    long long lo;
    uint64_t span;
    Py_ssize_t k;
} Groups;

static int
groups_ok(Groups *g, Py_ssize_t n)
{
    int w = g->width;
    if (!(w == 1 || w == 2 || w == 4 || w == 8) || g->values.len != n * w || g->lut.len % 4 || g->lut.len < 8 ||
        g->k < 1 || g->k > (1 << 20))
        return 0;
    g->span = (uint64_t)(g->lut.len / 4) - 1; /* the last entry: -1, for values outside the range */
    return ((const int32_t *)g->lut.buf)[g->span] == -1;
}

#define GROUPED_BY_MASK 16 /* up to this many groups, each group's sums are a masked pass over the chunk */

/* The sums of a chunk's events in groups t0 .. t0 + 3 into part[t0 .. t0 + 3] (brier, log loss, flags), in
 * one pass that adds every term masked by whether its event is in each group; `flags` packs each event's
 * outside, label and 1 in fields of 21 bits (a chunk's sums fit them). grouped_sums_and_total: groups t0 ..
 * t0 + 2, and in part[t0 + 3] the sums of every event (the last group's is the total less the others'). */
#define GROUPED_SUMS_BODY(LAST_MASKED)                                                        \
    uint64_t b[4] = {0, 0, 0, 0}, l[4] = {0, 0, 0, 0}, f[4] = {0, 0, 0, 0};                  \
    for (Py_ssize_t j = 0; j < m; j++) {                                                      \
        uint64_t d = (uint64_t)(int64_t)groups[j] - (uint64_t)t0;                             \
        uint64_t bj = brier[j].u, lj = logloss[j].u, fj = flags[j];                           \
        for (int u = 0; u < 3; u++) { /* unrolled: twelve sums in registers */                \
            uint64_t in = 0 - (uint64_t)(d == (uint64_t)u);                                   \
            b[u] += bj & in;                                                                  \
            l[u] += lj & in;                                                                  \
            f[u] += fj & in;                                                                  \
        }                                                                                     \
        uint64_t in = LAST_MASKED ? 0 - (uint64_t)(d == 3) : ~(uint64_t)0;                    \
        b[3] += bj & in;                                                                      \
        l[3] += lj & in;                                                                      \
        f[3] += fj & in;                                                                      \
    }                                                                                         \
    for (int u = 0; u < 4; u++) {                                                             \
        part[3 * (t0 + u)] = b[u];                                                            \
        part[3 * (t0 + u) + 1] = l[u];                                                        \
        part[3 * (t0 + u) + 2] = f[u];                                                        \
    }

VECTOR_CLONES static void
grouped_sums_masked(const int32_t *restrict groups, int32_t t0, const FloatBits *restrict brier,
                    const FloatBits *restrict logloss, const uint64_t *restrict flags, Py_ssize_t m,
                    uint64_t *restrict part)
{
    GROUPED_SUMS_BODY(1)
}

VECTOR_CLONES static void
grouped_sums_and_total(const int32_t *restrict groups, int32_t t0, const FloatBits *restrict brier,
                       const FloatBits *restrict logloss, const uint64_t *restrict flags, Py_ssize_t m,
                       uint64_t *restrict part)
{
    GROUPED_SUMS_BODY(0)
}

/* Each group's sums of a chunk (groups below k, at most GROUPED_BY_MASK) added into its running sums: every
 * group but the last by a masked pass, four at a time, the last one the chunk's total less theirs. */
static void
grouped_sums(const int32_t *groups, int32_t k, const FloatBits *brier, const FloatBits *logloss,
             const uint64_t *flags, Py_ssize_t m, uint64_t *sums)
{
    uint64_t part[3 * (GROUPED_BY_MASK + 4)];
    int32_t t0 = 0;
    for (; t0 + 4 < k; t0 += 4)
        grouped_sums_masked(groups, t0, brier, logloss, flags, m, part);
    grouped_sums_and_total(groups, t0, brier, logloss, flags, m, part); /* groups t0 .. k - 2, and the total */
    uint64_t *last = part + 3 * (t0 + 3);
    for (int32_t t = 0; t < k - 1; t++)
        for (int w = 0; w < 3; w++)
            last[w] -= part[3 * t + w];
    for (int32_t t = 0; t < k; t++) {
        const uint64_t *p = t == k - 1 ? last : part + 3 * t;
        uint64_t add[7] = {p[0], 0, p[1], 0, p[2] & 0x1FFFFF, (p[2] >> 21) & 0x1FFFFF, p[2] >> 42};
        add_group_sums(sums + 7 * t, add);
    }
}

/* Each event's outside, label and 1 packed for grouped_sums_masked. */
VECTOR_CLONES static void
pack_flags(const uint8_t *restrict outside, const uint8_t *restrict labels, Py_ssize_t m, uint64_t *restrict flags)
{
    for (Py_ssize_t j = 0; j < m; j++)
        flags[j] = (uint64_t)outside[j] | ((uint64_t)labels[j] << 21) | ((uint64_t)1 << 42);
}

/* The list of each group's (events, positives, outside, brier, log_loss) from its running sums. */
static PyObject *
grouped_sums_list(const uint64_t *sums, Py_ssize_t k)
{
    PyObject *result = PyList_New(k);
    for (Py_ssize_t t = 0; result != NULL && t < k; t++) {
        const uint64_t *s = sums + 7 * t;
        PyObject *item = NULL, *b_all = uint128_long(s[1], s[0]), *l_all = uint128_long(s[3], s[2]);
        if (b_all && l_all)
            item = Py_BuildValue("nnnOO", (Py_ssize_t)s[6], (Py_ssize_t)s[5], (Py_ssize_t)s[4], b_all, l_all);
        Py_XDECREF(b_all);
        Py_XDECREF(l_all);
        if (item == NULL)
            Py_CLEAR(result);
        else
            PyList_SET_ITEM(result, t, item);
    }
    return result;
}

/* Whether any of codes[0:m] is `a` or `b`. */
VECTOR_CLONES static int
any_code_of(const uint64_t *restrict codes, Py_ssize_t m, uint64_t a, uint64_t b)
{
    uint64_t hit = 0;
    for (Py_ssize_t j = 0; j < m; j++)
        hit |= (uint64_t)(codes[j] == a) | (uint64_t)(codes[j] == b);
    return hit != 0;
}

/* The scratch table of count_grouped_range_free: counts by row (uint32: a batch holds fewer than 2^32 events,
 * and half the bytes of int64 keep more of the table in the caches), and the (group, page) of each row. */
typedef struct {
    uint32_t *counts;
    int64_t *page;
    Py_ssize_t rows, capacity;
} Scratch;

/* A new zeroed row of the scratch table for (group, page), grown as needed: its offset, or -1 without memory. */
static __attribute__((noinline)) int32_t
scratch_row(Scratch *sc, uint64_t page)
{
    if (sc->rows == sc->capacity) {
        Py_ssize_t more = sc->capacity < 64 ? 64 : sc->capacity;
        if (sc->capacity + more > (INT32_MAX >> PAGE_BITS))
            return -1;
        uint32_t *counts = PyMem_RawRealloc(sc->counts, (size_t)((sc->capacity + more) << PAGE_BITS) * 4);
        if (counts == NULL)
            return -1;
        sc->counts = counts;
        int64_t *pages = PyMem_RawRealloc(sc->page, (size_t)(sc->capacity + more) * 8);
        if (pages == NULL)
            return -1;
        sc->page = pages;
        sc->capacity += more;
    }
    memset(sc->counts + (sc->rows << PAGE_BITS), 0, (size_t)(PAGE_MASK + 1) * 4);
    sc->page[sc->rows] = (int64_t)page;
    return (int32_t)(sc->rows++ << PAGE_BITS);
}

/* The row of each (group, page) of the scratch table: an open-addressed table of entries (key << 32) | row,
 * the key group * pages + page, kept at most half full, so that a lookup reads one entry, or a few. */
#define PAGEMAP_EMPTY UINT64_MAX
typedef struct {
    uint64_t *slots, mask;
    int bits;
    Py_ssize_t used;
} PageMap;

static inline uint64_t
pagemap_slot(const PageMap *pm, uint32_t key)
{
    uint64_t at = ((uint64_t)key * UINT64_C(0x9E3779B97F4A7C15)) >> (64 - pm->bits);
    while (pm->slots[at] != PAGEMAP_EMPTY && (uint32_t)(pm->slots[at] >> 32) != key)
        at = (at + 1) & pm->mask;
    return at;
}

/* An empty map for `expected` keys (and room to grow); nonzero without memory. */
static int
pagemap_make(PageMap *pm, Py_ssize_t expected)
{
    int bits = 10;
    while (bits < 40 && ((Py_ssize_t)1 << bits) < 4 * (expected + 64))
        bits++;
    pm->slots = PyMem_RawMalloc(sizeof(uint64_t) << bits);
    if (pm->slots == NULL)
        return 1;
    memset(pm->slots, 0xFF, sizeof(uint64_t) << bits);
    pm->bits = bits;
    pm->mask = ((uint64_t)1 << bits) - 1;
    pm->used = 0;
    return 0;
}

/* Put key -> row at the empty slot `at` (from pagemap_slot), doubling the map past half full; nonzero without
 * memory (the map is then as before, the key not in it). */
static __attribute__((noinline)) int
pagemap_put(PageMap *pm, uint64_t at, uint32_t key, int32_t row)
{
    pm->slots[at] = ((uint64_t)key << 32) | (uint32_t)row;
    if (++pm->used * 2 <= (Py_ssize_t)pm->mask + 1)
        return 0;
    PageMap grown;
    if (pagemap_make(&grown, (Py_ssize_t)(pm->mask + 1))) {
        pm->slots[at] = PAGEMAP_EMPTY;
        pm->used--;
        return 1;
    }
    for (uint64_t i = 0; i <= pm->mask; i++)
        if (pm->slots[i] != PAGEMAP_EMPTY) {
            grown.slots[pagemap_slot(&grown, (uint32_t)(pm->slots[i] >> 32))] = pm->slots[i];
            grown.used++;
        }
    PyMem_RawFree(pm->slots);
    *pm = grown;
    return 0;
}

PyDoc_STRVAR(count_grouped_range_free_doc,
"count_grouped_range_free(x, labels, label_width, groups, group_width, lo, lookup, tables, t_neg, t_pos,\n"
"    check_threshold, threshold, shift, tag_shift, with_sums)\n--\n\n"
"count_range_free (sign 1, the whole batch) for a batch whose events go to several tables: event i to the table\n"
"``tables[lookup[groups[i] - lo]]`` (``groups``: signed integers of ``group_width`` bytes), each table a tuple\n"
"``(base, page_of_row, counts, n_stored)`` of int64 counts. The events are counted into a scratch table of all\n"
"the groups' pages first, then added to the tables, so that nothing changes unless the whole batch is counted.\n"
"Returns ``(refused, need, n_stored, above, sums, scratch)``: whether a NaN score, a label other than 0 and 1\n"
"or a group value the lookup does not hold refused the batch; None, or how many more rows each table needs for\n"
"its new pages (nothing was added then: grow the tables and give ``scratch`` to merge_grouped); each table's\n"
"rows in use; each table's [negatives, positives] at the threshold codes with a score >= ``threshold`` (when\n"
"``check_threshold``); when ``with_sums``, each group's calibration_sums without weights, ``(events, positives,\n"
"outside, brier, log_loss)`` (else None): one pass over the batch for both; and the scratch table, ``(counts,\n"
"pages)``, when the tables need rows (else None).");

/* The tables of the grouped kernels: a tuple of (base, page_of_row, counts, n_stored) each, checked against a
 * scheme of n_pages pages; the buffers are held in `held` (3 a table, *n_held tables). Nonzero with an
 * exception set. */
static int
group_tables(PyObject *tables, uint64_t n_pages, Table *tbs, Py_buffer *held, Py_ssize_t *n_held)
{
    for (Py_ssize_t t = 0; t < PyTuple_GET_SIZE(tables); t++) {
        PyObject *item = PyTuple_GET_ITEM(tables, t);
        Table *tb = &tbs[t];
        Py_buffer *b = held + 3 * t;
        if (!PyTuple_Check(item) || !PyArg_ParseTuple(item, "w*w*w*n", &b[0], &b[1], &b[2], &tb->n_stored)) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_ValueError, "grouped kernel: inconsistent arguments");
            return 1;
        }
        *n_held = t + 1;
        tb->base = (int32_t *)b[0].buf;
        tb->page_of_row = (int64_t *)b[1].buf;
        tb->capacity = b[1].len / (Py_ssize_t)sizeof(int64_t);
        tb->counts = b[2].buf; /* int64: the grouped kernels count whole events */
        tb->n_slots = (uint64_t)(b[2].len / 8);
        if (b[0].len != (Py_ssize_t)(n_pages * sizeof(int32_t)) || b[1].len % 8 || b[2].len % 8 ||
            tb->n_stored < 0 || tb->n_stored > tb->capacity ||
            (uint64_t)tb->capacity * (PAGE_MASK + 1) > tb->n_slots || tb->capacity > (INT32_MAX >> PAGE_BITS)) {
            PyErr_SetString(PyExc_ValueError, "grouped kernel: inconsistent arguments");
            return 1;
        }
    }
    return 0;
}

/* Release the buffers group_tables held (n_held tables), and free them and the tables. */
static void
release_tables(Table *tbs, Py_buffer *held, Py_ssize_t n_held)
{
    for (Py_ssize_t t = 0; t < n_held; t++)
        for (int j = 0; j < 3; j++)
            PyBuffer_Release(&held[3 * t + j]);
    PyMem_Free(held);
    PyMem_Free(tbs);
}

/* Add the scratch table's rows (counts, and the group * n_pages + page of each) to the tables, giving rows to
 * new pages; nonzero (nothing more added) at a row of no table, or past a table's rows or slots. */
static int
merge_scratch(Table *tbs, Py_ssize_t k, uint64_t n_pages, const uint32_t *counts, const int64_t *pages,
              Py_ssize_t rows)
{
    for (Py_ssize_t r = 0; r < rows; r++) {
        uint64_t t = (uint64_t)pages[r] / n_pages, page = (uint64_t)pages[r] % n_pages;
        if (pages[r] < 0 || t >= (uint64_t)k)
            return 1;
        Table *tb = &tbs[t];
        int32_t b = tb->base[page];
        if (b < 0) {
            if (tb->n_stored >= tb->capacity)
                return 1;
            b = tb->base[page] = (int32_t)(tb->n_stored << PAGE_BITS);
            tb->page_of_row[tb->n_stored++] = (int64_t)page;
        }
        if ((uint64_t)b + PAGE_MASK >= tb->n_slots)
            return 1;
        const uint32_t *from = counts + (r << PAGE_BITS);
        int64_t *to = (int64_t *)tb->counts + b;
        for (Py_ssize_t s = 0; s <= (Py_ssize_t)PAGE_MASK; s++)
            to[s] += from[s];
    }
    return 0;
}

static PyObject *
count_grouped_range_free(PyObject *Py_UNUSED(module), PyObject *args)
{
    Py_buffer x, labels;
    Groups g = {0};
    int label_width, check_threshold, shift, tag_shift, with_sums;
    unsigned long long t_neg, t_pos;
    double threshold;
    PyObject *tables;
    if (!PyArg_ParseTuple(args, "y*y*iy*iLy*O!KKpdiip", &x, &labels, &label_width, &g.values, &g.width, &g.lo,
                          &g.lut, &PyTuple_Type, &tables, &t_neg, &t_pos, &check_threshold, &threshold, &shift,
                          &tag_shift, &with_sums))
        return NULL;
    PyObject *result = NULL;
    Table *tbs = NULL;
    Py_buffer *held = NULL;
    Py_ssize_t n_held = 0;
    PageMap map = {0}; /* the row of each (group, page) in the scratch counts: many groups */
    int32_t *dense = NULL; /* the same, by (group, page): up to GROUPED_DENSE_UP_TO pairs, one lookup less */
    Scratch sc = {0};
    Py_ssize_t *new_pages = NULL;
    uint64_t *sums = NULL; /* per group: brier low, high, log loss low, high, outside, positives, events */
    Py_ssize_t n = x.len / (Py_ssize_t)sizeof(double);
    g.k = PyTuple_GET_SIZE(tables);
    int width_ok = label_width == 1 || label_width == 2 || label_width == 4 || label_width == 8;
    Py_ssize_t n_labels = width_ok ? labels.len / label_width : -1;
    if (!groups_ok(&g, n) || g.k > GROUPED_IN_PLACE_UP_TO || (uint64_t)n > UINT32_MAX || !width_ok ||
        labels.len % label_width || (n_labels != 1 && n_labels != n) || shift < 8 || shift > 63 ||
        tag_shift != 64 - shift || (uint64_t)g.k << (66 - shift - PAGE_BITS) > UINT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "count_grouped_range_free: inconsistent arguments");
        goto done;
    }
    uint64_t code_limit = (uint64_t)1 << (66 - shift), n_pages = code_limit >> PAGE_BITS;
    tbs = PyMem_Calloc((size_t)g.k, sizeof(Table));
    held = PyMem_Calloc((size_t)g.k * 3, sizeof(Py_buffer));
    new_pages = PyMem_Calloc((size_t)g.k, sizeof(Py_ssize_t));
    sums = PyMem_Calloc((size_t)g.k * 7, sizeof(uint64_t));
    int use_dense = (uint64_t)g.k * n_pages <= GROUPED_DENSE_UP_TO;
    if (use_dense)
        dense = PyMem_Malloc((size_t)(g.k * n_pages) * sizeof(int32_t));
    if (tbs == NULL || held == NULL || new_pages == NULL || sums == NULL || (use_dense && !dense)) {
        PyErr_NoMemory();
        goto done;
    }
    if (group_tables(tables, n_pages, tbs, held, &n_held))
        goto done;
    const double *xs = (const double *)x.buf;
    const char *lab = (const char *)labels.buf, *groups = (const char *)g.values.buf;
    const int32_t *lut = g.width == 8 ? lookup_or_null((const int32_t *)g.lut.buf, g.span) : g.lut.buf;
    if (lut == NULL && g.span > (uint64_t)g.k) {
        PyErr_SetString(PyExc_ValueError, "count_grouped_range_free: inconsistent arguments");
        goto done;
    }
    uint64_t codes[CHUNK];
    uint8_t chunk_labels[CHUNK], outside[CHUNK];
    int32_t chunk_groups[CHUNK];
    FloatBits brier[CHUNK], logloss[CHUNK];
    uint64_t flags[CHUNK];
    int broadcast = n_labels == 1 && n != 1, refused = 0, bad = 0, no_memory = 0, short_of_rows = 0;
    Py_ssize_t i = 0;
    if (broadcast) {
        refused = labels_chunk(lab, label_width, 1, chunk_labels);
        memset(chunk_labels, chunk_labels[0], CHUNK);
    }
    Py_ssize_t expected = 0; /* rows: as many as the tables hold (batches like the ones before), then grown */
    for (Py_ssize_t t = 0; t < g.k; t++)
        expected += tbs[t].n_stored;
    Py_BEGIN_ALLOW_THREADS
    if (dense != NULL)
        memset(dense, 0xFF, (size_t)(g.k * n_pages) * sizeof(int32_t)); /* every int32 -1 */
    else if (pagemap_make(&map, expected))
        no_memory = 1;
    if (expected > 0 && expected < (INT32_MAX >> PAGE_BITS) - 64) {
        sc.counts = PyMem_RawMalloc((size_t)(expected << PAGE_BITS) * 4);
        sc.page = PyMem_RawMalloc((size_t)expected * 8);
        sc.capacity = sc.counts != NULL && sc.page != NULL ? expected : 0;
    }
    for (; i < n && !refused && !bad && !no_memory; i += CHUNK) {
        Py_ssize_t m = n - i < CHUNK ? n - i : CHUNK;
        /* an event of a group the lookup does not know refuses the batch too (the caller counts it otherwise) */
        if (groups_chunk(groups, g.width, i, m, g.lo, lut, g.span, (int32_t)g.k, chunk_groups) ||
            (!broadcast && labels_chunk(lab + i * label_width, label_width, m, chunk_labels)) ||
            codes_chunk(xs + i, chunk_labels, m, shift, tag_shift, codes)) {
            refused = 1;
            break;
        }
        if (with_sums) { /* a chunk's terms fit a uint64 (256 below 2^52 each): summed per group, then added */
            calibration_chunk(xs + i, chunk_labels, m, 1, brier, logloss, outside);
            if (g.k <= GROUPED_BY_MASK) {
                pack_flags(outside, chunk_labels, m, flags);
                grouped_sums(chunk_groups, (int32_t)g.k, brier, logloss, flags, m, sums);
            }
            else
                for (Py_ssize_t j = 0; j < m; j++) {
                    uint64_t part[7] = {brier[j].u, 0, logloss[j].u, 0, outside[j], chunk_labels[j], 1};
                    add_group_sums(sums + 7 * chunk_groups[j], part);
                }
        }
        /* each event counted where its page has a row (one lookup in `dense`, a tight loop), else given one */
        Py_ssize_t j = 0;
        while (j < m) {
            if (dense != NULL) {
                uint32_t *restrict counts = sc.counts, pages = (uint32_t)n_pages;
                for (; j < m; j++) {
                    uint64_t code = codes[j];
                    int32_t b = dense[(uint32_t)chunk_groups[j] * pages + (uint32_t)(code >> PAGE_BITS)];
                    if (b < 0)
                        break;
                    counts[(uint32_t)b + (uint32_t)(code & PAGE_MASK)] += 1;
                }
                if (j == m)
                    break;
            }
            uint64_t code = codes[j], page = (uint64_t)chunk_groups[j] * n_pages + (code >> PAGE_BITS);
            if (code >= code_limit) {
                bad = 1;
                break;
            }
            uint64_t at = 0, entry = 0;
            int32_t b;
            if (dense != NULL)
                b = dense[page];
            else {
                at = pagemap_slot(&map, (uint32_t)page);
                entry = map.slots[at];
                b = entry == PAGEMAP_EMPTY ? -1 : (int32_t)(uint32_t)entry;
            }
            if (b < 0) { /* rare: the group's first event in this page */
                b = scratch_row(&sc, page);
                if (b < 0 || (dense == NULL && pagemap_put(&map, at, (uint32_t)page, b))) {
                    no_memory = 1;
                    break;
                }
                if (dense != NULL)
                    dense[page] = b;
            }
            sc.counts[(uint32_t)b + (uint32_t)(code & PAGE_MASK)] += 1;
            j++;
        }
        if (j < m)
            break;
        if (check_threshold && any_code_of(codes, m, t_neg, t_pos))
            for (Py_ssize_t j = 0; j < m; j++)
                if ((codes[j] == t_neg || codes[j] == t_pos) && xs[i + j] >= threshold)
                    tbs[chunk_groups[j]].above[codes[j] == t_pos] += 1;
    }
    /* the tables' new pages: all of them must have rows before anything is added */
    if (!refused && !bad && !no_memory) {
        for (Py_ssize_t r = 0; r < sc.rows; r++) {
            uint64_t t = (uint64_t)sc.page[r] / n_pages, page = (uint64_t)sc.page[r] % n_pages;
            new_pages[t] += tbs[t].base[page] < 0;
        }
        for (Py_ssize_t t = 0; t < g.k; t++)
            short_of_rows |= new_pages[t] > tbs[t].capacity - tbs[t].n_stored;
        if (!short_of_rows)
            bad = merge_scratch(tbs, g.k, n_pages, sc.counts, sc.page, sc.rows);
    }
    Py_END_ALLOW_THREADS
    if (no_memory) {
        PyErr_NoMemory();
        goto done;
    }
    if (bad) {
        PyErr_SetString(PyExc_ValueError, "count_grouped_range_free: inconsistent arguments");
        goto done;
    }
    PyObject *need = NULL, *stored = PyTuple_New(g.k), *above = PyTuple_New(g.k);
    if (short_of_rows && !refused)
        need = PyTuple_New(g.k);
    else {
        need = Py_None;
        Py_INCREF(need);
    }
    if (stored == NULL || above == NULL || need == NULL) {
        Py_XDECREF(stored);
        Py_XDECREF(above);
        Py_XDECREF(need);
        goto done;
    }
    for (Py_ssize_t t = 0; t < g.k; t++) {
        PyObject *s = PyLong_FromSsize_t(tbs[t].n_stored);
        PyObject *a = Py_BuildValue("(LL)", tbs[t].above[0], tbs[t].above[1]);
        PyObject *more = need != Py_None ? PyLong_FromSsize_t(new_pages[t]) : NULL;
        if (s == NULL || a == NULL || (need != Py_None && more == NULL)) {
            Py_XDECREF(s);
            Py_XDECREF(a);
            Py_XDECREF(more);
            Py_DECREF(stored);
            Py_DECREF(above);
            Py_DECREF(need);
            goto done;
        }
        PyTuple_SET_ITEM(stored, t, s);
        PyTuple_SET_ITEM(above, t, a);
        if (more != NULL)
            PyTuple_SET_ITEM(need, t, more);
    }
    PyObject *found = with_sums && !refused ? grouped_sums_list(sums, g.k) : Py_None;
    if (found == Py_None)
        Py_INCREF(found);
    PyObject *rest = Py_None; /* short of rows: the scratch table, for merge_grouped once the tables grew */
    if (need != Py_None)
        rest = Py_BuildValue("(y#y#)", (const char *)sc.counts, (sc.rows << PAGE_BITS) * (Py_ssize_t)sizeof(uint32_t),
                             (const char *)sc.page, sc.rows * (Py_ssize_t)sizeof(int64_t));
    else
        Py_INCREF(rest);
    if (found == NULL || rest == NULL) {
        Py_XDECREF(found);
        Py_XDECREF(rest);
        Py_DECREF(stored);
        Py_DECREF(above);
        Py_DECREF(need);
        goto done;
    }
    result = Py_BuildValue("(ONNNNN)", refused ? Py_True : Py_False, need, stored, above, found, rest);
done:
    PyMem_Free(sums);
    release_tables(tbs, held, n_held);
    PyMem_Free(new_pages);
    PyMem_RawFree(map.slots);
    PyMem_Free(dense);
    PyMem_RawFree(sc.counts);
    PyMem_RawFree(sc.page);
    PyBuffer_Release(&x);
    PyBuffer_Release(&labels);
    PyBuffer_Release(&g.values);
    PyBuffer_Release(&g.lut);
    return result;
}

PyDoc_STRVAR(merge_grouped_doc,
"merge_grouped(counts, pages, tables, shift) -> n_stored\n\n"
"The scratch table that count_grouped_range_free gave back, ``(counts, pages)``, added to the tables (each a\n"
"tuple ``(base, page_of_row, counts, n_stored)``, now with rows for their new pages) of a range-free scheme of\n"
"this shift: each table's rows in use after. A row of no table, or a table short of rows, is refused: the\n"
"tables may then hold part of the rows.");

static PyObject *
merge_grouped(PyObject *Py_UNUSED(module), PyObject *args)
{
    Py_buffer cb, pb;
    PyObject *tables;
    int shift;
    if (!PyArg_ParseTuple(args, "y*y*O!i", &cb, &pb, &PyTuple_Type, &tables, &shift))
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t k = PyTuple_GET_SIZE(tables), n_held = 0, rows = pb.len / 8;
    Table *tbs = PyMem_Calloc((size_t)(k ? k : 1), sizeof(Table));
    Py_buffer *held = PyMem_Calloc((size_t)(k ? k : 1) * 3, sizeof(Py_buffer));
    if (tbs == NULL || held == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    if (shift < 8 || shift > 63 || pb.len % 8 || cb.len != (rows << PAGE_BITS) * (Py_ssize_t)sizeof(uint32_t)) {
        PyErr_SetString(PyExc_ValueError, "merge_grouped: inconsistent arguments");
        goto done;
    }
    uint64_t n_pages = ((uint64_t)1 << (66 - shift)) >> PAGE_BITS;
    if (group_tables(tables, n_pages, tbs, held, &n_held))
        goto done;
    int bad;
    Py_BEGIN_ALLOW_THREADS
    bad = merge_scratch(tbs, k, n_pages, (const uint32_t *)cb.buf, (const int64_t *)pb.buf, rows);
    Py_END_ALLOW_THREADS
    if (bad) {
        PyErr_SetString(PyExc_ValueError, "merge_grouped: inconsistent arguments");
        goto done;
    }
    result = PyTuple_New(k);
    for (Py_ssize_t t = 0; result != NULL && t < k; t++) {
        PyObject *s = PyLong_FromSsize_t(tbs[t].n_stored);
        if (s == NULL)
            Py_CLEAR(result);
        else
            PyTuple_SET_ITEM(result, t, s);
    }
done:
    release_tables(tbs, held, n_held);
    PyBuffer_Release(&cb);
    PyBuffer_Release(&pb);
    return result;
}

PyDoc_STRVAR(count_columns_doc,
"count_columns(scores, y, block_rows, first, tables, sign, t_neg, t_pos, check_threshold, threshold, shift,\n"
"              tag_shift, start, end, stored, above) -> (row, column, offset)\n\n"
"Count every column first + c of a row-major matrix of scores (float64, n rows, no NaN), for c below k =\n"
"len(tables), into tables[c] (a tuple ``(base, page_of_row, counts, n_stored)`` of whole counts of a range-\n"
"free scheme of this shift), each score labelled 1 where its row's class ``y`` (int64, a column of the\n"
"matrix, else refused before anything is counted) is first + c: what count_range_free does for each column\n"
"apart, adding ``sign`` (1 or -1), but reading the matrix once. Rows come in blocks of ``block_rows`` (at\n"
"most 2^16), each block's k columns written column by column into a buffer, then each column counted (into\n"
"32-bit scratch tables added to the counts before it returns, where the batch brings eight scores a slot or\n"
"more). Positions are (row of a block's start, column, offset within the block): it counts from ``start`` up\n"
"to ``end`` (``(n, 0, 0)``: the end), and stops before the first score whose page needs a row when its table\n"
"has none left. Returns where it stopped; writes each table's rows in use into ``stored`` (int64, k) and adds\n"
"each table's signed negatives and positives at the threshold codes into ``above`` (int64, 2k).");

#define COLUMN_BLOCK_UP_TO (1 << 16) /* rows of a block at most */

static PyObject *
count_columns(PyObject *Py_UNUSED(module), PyObject *args)
{
    Py_buffer xb, yb, sb, ab;
    Py_ssize_t block, first, r0, c0, o0, r1, c1, o1;
    PyObject *tables;
    int sign, check_threshold, shift, tag_shift;
    unsigned long long t_neg, t_pos;
    double threshold;
    if (!PyArg_ParseTuple(args, "y*y*nnO!iKKpdii(nnn)(nnn)w*w*", &xb, &yb, &block, &first, &PyTuple_Type, &tables,
                          &sign, &t_neg, &t_pos, &check_threshold, &threshold, &shift, &tag_shift, &r0, &c0, &o0, &r1,
                          &c1, &o1, &sb, &ab))
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t k = PyTuple_GET_SIZE(tables), n_held = 0;
    Py_ssize_t n = yb.len / (Py_ssize_t)sizeof(int64_t);
    Table *tbs = PyMem_Calloc((size_t)(k ? k : 1), sizeof(Table));
    Py_buffer *held = PyMem_Calloc((size_t)(k ? k : 1) * 3, sizeof(Py_buffer));
    double *buf = NULL;
    uint32_t *scratch = NULL;
    Py_ssize_t *first_row = NULL; /* k + 1 starts of each class's rows in rows_by_class, then k next ones, then m */
    if (tbs == NULL || held == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    int starts_ok = block >= 1 && block <= COLUMN_BLOCK_UP_TO && r0 >= 0 && r0 % block == 0 && r1 <= n &&
                    (r1 % block == 0 || r1 == n) && c0 >= 0 && c0 < k && c1 >= 0 && c1 < k && o0 >= 0 &&
                    o0 < block && o1 >= 0 && o1 < block &&
                    (r0 < r1 || (r0 == r1 && (c0 < c1 || (c0 == c1 && o0 <= o1))));
    Py_ssize_t width = n > 0 ? xb.len / (Py_ssize_t)sizeof(double) / n : first + k; /* the matrix's columns */
    if (k < 1 || yb.len % 8 || xb.len != n * width * (Py_ssize_t)sizeof(double) || first < 0 || first + k > width ||
        !starts_ok || shift < 8 ||
        shift > 63 || tag_shift != 64 - shift || (sign != 1 && sign != -1) || sb.len != k * 8 ||
        ab.len != 2 * k * 8) {
        PyErr_SetString(PyExc_ValueError, "count_columns: inconsistent arguments");
        goto done;
    }
    uint64_t n_pages = ((uint64_t)1 << (66 - shift)) >> PAGE_BITS;
    if (group_tables(tables, n_pages, tbs, held, &n_held))
        goto done;
    Py_ssize_t stride = block + 8; /* not a power of two: the columns' lines fall in different cache sets */
    buf = PyMem_Malloc((size_t)(k * stride) * sizeof(double));
    first_row = PyMem_Malloc((size_t)(2 * k + 1 + block) * sizeof(Py_ssize_t));
    if (buf == NULL || first_row == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t *next_row = first_row + k + 1, *rows_by_class = next_row + k;
    /* many scores a slot: counted into uint32 scratch tables (half the bytes: more of the k tables stay in cache),
     * added to the counts before returning */
    uint64_t slots = 0;
    for (Py_ssize_t c = 0; c < k; c++)
        slots += tbs[c].n_slots;
    uint64_t scores = (uint64_t)(n - r0) * (uint64_t)k;
    if (sign == 1 && scores >= 8 * slots && (uint64_t)n < UINT32_MAX) {
        scratch = PyMem_Calloc((size_t)(slots ? slots : 1), sizeof(uint32_t));
        if (scratch == NULL) {
            PyErr_NoMemory();
            goto done;
        }
    }
    int64_t **counts_of = scratch ? PyMem_Malloc((size_t)k * sizeof(int64_t *)) : NULL;
    if (scratch && counts_of == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t c = 0, at = 0; scratch && c < k; at += (Py_ssize_t)tbs[c].n_slots, c++) {
        counts_of[c] = tbs[c].counts;
        tbs[c].counts = scratch + at;
        tbs[c].counts_u32 = 1;
    }
    for (Py_ssize_t c = 0; c < k; c++) {
        tbs[c].sign = sign;
        tbs[c].check_threshold = check_threshold;
        tbs[c].t_neg = t_neg;
        tbs[c].t_pos = t_pos;
        tbs[c].threshold = threshold;
    }
    const double *x = (const double *)xb.buf;
    const int64_t *y = (const int64_t *)yb.buf;
    for (Py_ssize_t i = 0; i < n; i++)
        if ((uint64_t)y[i] >= (uint64_t)width) {
            PyErr_Format(PyExc_ValueError, "count_columns: class index %lld at row %zd out of range",
                         (long long)y[i], i);
            goto done;
        }
    uint64_t codes[CHUNK];
    uint8_t no_labels[CHUNK] = {0};
    const uint64_t positive = (uint64_t)1 << (tag_shift + 1); /* a code's label bit (codes_chunk's) */
    Py_ssize_t row = r0, column = c0, offset = o0;
    int bad_slot = 0, at_end = 0, need_row = 0;
    Py_BEGIN_ALLOW_THREADS
    for (; row < n && row <= r1; row += block, column = 0, offset = 0) {
        Py_ssize_t m = n - row < block ? n - row : block;
        write_columns(x + row * width + first, width, m, k, buf, stride); /* the block's k columns: k streams */
        /* the block's rows by class (a counting sort): a column's positives are its class's rows */
        memset(first_row, 0, (size_t)(k + 1) * sizeof(Py_ssize_t));
        for (Py_ssize_t j = 0; j < m; j++) {
            uint64_t at = (uint64_t)(y[row + j] - first);
            first_row[at < (uint64_t)k ? at + 1 : 0]++; /* rows of other classes counted at 0: never read */
        }
        first_row[0] = 0;
        for (Py_ssize_t c = 0; c < k; c++)
            first_row[c + 1] += first_row[c];
        memcpy(next_row, first_row, (size_t)k * sizeof(Py_ssize_t));
        for (Py_ssize_t j = 0; j < m; j++) {
            uint64_t at = (uint64_t)(y[row + j] - first);
            if (at < (uint64_t)k)
                rows_by_class[next_row[at]++] = j;
        }
        for (; column < k; column++, offset = 0) {
            Py_ssize_t last = m;
            if (row == r1 && column >= c1) {
                if (column > c1) {
                    at_end = 1;
                    break;
                }
                last = o1;
            }
            Table *tb = &tbs[column];
            Py_ssize_t pos = first_row[column]; /* the next of the class's rows, in order */
            while (pos < first_row[column + 1] && rows_by_class[pos] < offset)
                pos++;
            while (offset < last) { /* the column's scores of the block, a chunk at a time */
                Py_ssize_t todo = last - offset < CHUNK ? last - offset : CHUNK;
                const double *xs = buf + column * stride + offset;
                codes_chunk(xs, no_labels, todo, shift, tag_shift, codes); /* as negatives, then the positives */
                for (; pos < first_row[column + 1] && rows_by_class[pos] < offset + todo; pos++)
                    codes[rows_by_class[pos] - offset] += positive;
                Py_ssize_t counted = count_chunk(tb, codes, xs, todo);
                offset += counted;
                if (tb->bad) {
                    bad_slot = 1;
                    break;
                }
                if (counted < todo) { /* a page needs a row: the caller gives its table more */
                    need_row = 1;
                    break;
                }
            }
            if (need_row || bad_slot)
                break;
        }
        if (at_end || need_row || bad_slot)
            break;
    }
    for (Py_ssize_t c = 0; scratch && c < k; c++) { /* the scratch counts into the tables' */
        const uint32_t *from = tbs[c].counts;
        int64_t *to = counts_of[c];
        Py_ssize_t used = tbs[c].n_stored << PAGE_BITS;
        for (Py_ssize_t s = 0; s < used; s++)
            to[s] += from[s];
        tbs[c].counts = to;
    }
    Py_END_ALLOW_THREADS
    PyMem_Free(counts_of);
    int64_t *stored = (int64_t *)sb.buf, *above = (int64_t *)ab.buf; /* what was counted, also before a refusal */
    for (Py_ssize_t c = 0; c < k; c++) {
        stored[c] = tbs[c].n_stored;
        above[2 * c] += tbs[c].above[0];
        above[2 * c + 1] += tbs[c].above[1];
    }
    if (bad_slot) {
        PyErr_SetString(PyExc_ValueError, "count_columns: a score falls outside its table");
        goto done;
    }
    result = need_row ? Py_BuildValue("nnn", row, column, offset) : Py_BuildValue("nnn", r1, c1, o1);
done:
    release_tables(tbs, held, n_held);
    PyMem_Free(buf);
    PyMem_Free(scratch);
    PyMem_Free(first_row);
    PyBuffer_Release(&xb);
    PyBuffer_Release(&yb);
    PyBuffer_Release(&sb);
    PyBuffer_Release(&ab);
    return result;
}

PyDoc_STRVAR(group_by_code_doc,
"group_by_code(codes, counts, sources, outs) -> None\n\n"
"The events of a batch grouped by code: `codes` (int32, each in [0, len(counts))), `counts` (int64: the events\n"
"of each code) and, for each source (a buffer of one item per code) and the out buffer of the same size beside\n"
"it, the source's items written into out group after group, in their order within a group; in one pass over the\n"
"codes. A code out of range, or more events of a code than its count, is refused (out is then left part\n"
"written).");

#define MAX_GROUPED_COLUMNS 16

static PyObject *
group_by_code(PyObject *Py_UNUSED(module), PyObject *args)
{
    Py_buffer codes, counts;
    PyObject *sources, *outs;
    if (!PyArg_ParseTuple(args, "y*y*O!O!", &codes, &counts, &PyTuple_Type, &sources, &PyTuple_Type, &outs))
        return NULL;
    PyObject *result = NULL;
    int64_t *next = NULL, *end = NULL;
    Py_buffer src[MAX_GROUPED_COLUMNS], dst[MAX_GROUPED_COLUMNS];
    Py_ssize_t held = 0;
    Py_ssize_t n = codes.len / (Py_ssize_t)sizeof(int32_t);
    Py_ssize_t groups = counts.len / (Py_ssize_t)sizeof(int64_t);
    Py_ssize_t columns = PyTuple_GET_SIZE(sources);
    if (codes.len % 4 || counts.len % 8 || groups < 1 || groups > INT32_MAX || PyTuple_GET_SIZE(outs) != columns ||
        columns > MAX_GROUPED_COLUMNS) {
        PyErr_SetString(PyExc_ValueError, "group_by_code: inconsistent arguments");
        goto done;
    }
    next = PyMem_Malloc((size_t)groups * sizeof(int64_t));
    end = PyMem_Malloc((size_t)groups * sizeof(int64_t));
    if (next == NULL || end == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    const int64_t *cnt = (const int64_t *)counts.buf;
    int64_t at = 0;
    for (Py_ssize_t g = 0; g < groups; g++) {
        if (cnt[g] < 0 || cnt[g] > n - at) {
            PyErr_SetString(PyExc_ValueError, "group_by_code: counts must be whole and fit the batch");
            goto done;
        }
        next[g] = at;
        at += cnt[g];
        end[g] = at;
    }
    Py_ssize_t size[MAX_GROUPED_COLUMNS];
    for (; held < columns; held++) {
        if (PyObject_GetBuffer(PyTuple_GET_ITEM(sources, held), &src[held], PyBUF_SIMPLE) < 0)
            goto done;
        if (PyObject_GetBuffer(PyTuple_GET_ITEM(outs, held), &dst[held], PyBUF_WRITABLE) < 0) {
            PyBuffer_Release(&src[held]);
            goto done;
        }
        size[held] = n > 0 ? src[held].len / n : 1;
        if (n > 0 && (src[held].len != n * size[held] || dst[held].len != src[held].len || size[held] < 1)) {
            PyErr_SetString(PyExc_ValueError, "group_by_code: a source or out of another length");
            held++;
            goto done;
        }
    }
    const int32_t *cs = (const int32_t *)codes.buf;
    int bad = 0;
    Py_BEGIN_ALLOW_THREADS
    /* One pass for every column: each event's place is found once (the increment of its group's next place is
     * a chain through memory when neighbours share a group, which a pass per column paid once per column). */
    char *d[MAX_GROUPED_COLUMNS];
    const char *f[MAX_GROUPED_COLUMNS];
    for (Py_ssize_t col = 0; col < columns; col++) {
        d[col] = (char *)dst[col].buf;
        f[col] = (const char *)src[col].buf;
    }
#define SCATTER(COPIES)                                                 \
        for (Py_ssize_t j = 0; j < n; j++) {                            \
            uint32_t c = (uint32_t)cs[j];                               \
            if (c >= (uint32_t)groups || next[c] >= end[c]) {           \
                bad = 1;                                                \
                break;                                                  \
            }                                                           \
            int64_t to = next[c]++;                                     \
            COPIES;                                                     \
        }
    if (columns == 2 && size[0] == 1 && size[1] == 8) { /* labels and scores: the common batch */
        SCATTER(d[0][to] = f[0][j]; memcpy(d[1] + to * 8, f[1] + j * 8, 8))
    }
    else if (columns == 2 && size[0] == 8 && size[1] == 1) {
        SCATTER(memcpy(d[0] + to * 8, f[0] + j * 8, 8); d[1][to] = f[1][j])
    }
    else {
        SCATTER(for (Py_ssize_t col = 0; col < columns; col++) {
            Py_ssize_t w = size[col];
            if (w == 8)
                memcpy(d[col] + to * 8, f[col] + j * 8, 8);
            else if (w == 1)
                d[col][to] = f[col][j];
            else
                memcpy(d[col] + to * w, f[col] + j * w, (size_t)w);
        })
    }
#undef SCATTER
    Py_END_ALLOW_THREADS
    if (bad) {
        PyErr_SetString(PyExc_ValueError, "group_by_code: a code out of range, or past its count");
        goto done;
    }
    result = Py_None;
    Py_INCREF(result);
done:
    for (Py_ssize_t col = 0; col < held; col++) {
        PyBuffer_Release(&src[col]);
        PyBuffer_Release(&dst[col]);
    }
    PyMem_Free(next);
    PyMem_Free(end);
    PyBuffer_Release(&codes);
    PyBuffer_Release(&counts);
    return result;
}

/* ------------------------------------------------------------------------ */
/* Lower convex hull of a curve                                              */
/* ------------------------------------------------------------------------ */

/* The twin of curves._lower_hull, step for step (the same triples, the same products, no fused
 * multiply-adds): passes that drop every inner point on or above the chord of its two neighbours, then,
 * after 64 passes, the monotone chain. The point is speed: a pass in numpy costs about ten calls. */
static inline double
hull_cross(const double *x, const double *y, int64_t a, int64_t b, int64_t c) CALIBRATION_MATH;

static inline double
hull_cross(const double *x, const double *y, int64_t a, int64_t b, int64_t c)
{
    return (x[b] - x[a]) * (y[c] - y[a]) - (y[b] - y[a]) * (x[c] - x[a]);
}

PyDoc_STRVAR(lower_hull_doc,
"lower_hull(x, y, out) -> int\n\n"
"Indices of the lower convex hull of the points (x[i], y[i]) (float64, x non-decreasing), written into\n"
"`out` (int64, as long as x); returns how many. The same indices as curves._lower_hull's numpy passes.");

static PyObject *
lower_hull(PyObject *Py_UNUSED(module), PyObject *args)
{
    Py_buffer xb, yb, ob;
    if (!PyArg_ParseTuple(args, "y*y*w*", &xb, &yb, &ob))
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t n = xb.len / (Py_ssize_t)sizeof(double);
    if (xb.len % 8 || yb.len != xb.len || ob.len != n * (Py_ssize_t)sizeof(int64_t)) {
        PyErr_SetString(PyExc_ValueError, "lower_hull: inconsistent arguments");
        goto done;
    }
    int64_t *out = (int64_t *)ob.buf;
    int64_t *spare = PyMem_Malloc((size_t)(n > 0 ? n : 1) * sizeof(int64_t));
    if (spare == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    const double *x = (const double *)xb.buf, *y = (const double *)yb.buf;
    Py_ssize_t m = n;
    Py_BEGIN_ALLOW_THREADS
    /* the passes write from one buffer into the other, the first from the points themselves (every index in:
     * its triples read straight from x and y); the last pass's buffer is copied to `out` if it is the spare */
    int64_t *idx = out, *into = spare;
    int settled = n < 3;
    if (settled)
        for (Py_ssize_t i = 0; i < n; i++)
            out[i] = i;
    else {
        Py_ssize_t k = 0;
        into[k++] = 0;
        for (Py_ssize_t i = 1; i + 1 < n; i++) { /* written always, kept by the count: no branch to mispredict */
            into[k] = i;
            k += hull_cross(x, y, i - 1, i, i + 1) > 0;
        }
        into[k++] = n - 1;
        settled = k == n;
        m = k;
        idx = into;
        into = out;
    }
    for (int pass = 1; pass < 64 && !settled; pass++) {
        if (m < 3) {
            settled = 1;
            break;
        }
        Py_ssize_t k = 0;
        into[k++] = idx[0];
        for (Py_ssize_t i = 1; i + 1 < m; i++) {
            into[k] = idx[i];
            k += hull_cross(x, y, idx[i - 1], idx[i], idx[i + 1]) > 0;
        }
        into[k++] = idx[m - 1];
        settled = k == m;
        m = k;
        int64_t *swap = idx;
        idx = into;
        into = swap;
    }
    if (!settled) { /* the monotone chain over the points left, in place */
        Py_ssize_t top = 0;
        for (Py_ssize_t i = 0; i < m; i++) {
            int64_t p = idx[i];
            while (top >= 2 && hull_cross(x, y, idx[top - 2], idx[top - 1], p) <= 0)
                top--;
            idx[top++] = p;
        }
        m = top;
    }
    if (idx != out)
        memcpy(out, idx, (size_t)m * sizeof(int64_t));
    Py_END_ALLOW_THREADS
    PyMem_Free(spare);
    result = PyLong_FromSsize_t(m);
done:
    PyBuffer_Release(&xb);
    PyBuffer_Release(&yb);
    PyBuffer_Release(&ob);
    return result;
}

PyDoc_STRVAR(run_order_doc,
"run_order(target, page, order) -> bool\n\n"
"The slots of a table (`target`, int64: each slot's key * 2 + label, rows of `page` slots) in ascending order\n"
"of target, written into `order` (int64, as long as `target`), when every row is a strictly monotone run and\n"
"runs overlap at most two at a time (the two labels of one range of bins): the rows sorted by their least\n"
"target, each run read in its direction and two overlapping ones merged. False, with `order` not to be used,\n"
"where that does not hold or two slots share a target (numpy's stable argsort then gives the order).");

typedef struct {
    int64_t lo, hi;
    Py_ssize_t first, step; /* the run's slots in ascending order of target: first, first + step, ... */
} RowRun;

static int
row_run_cmp(const void *a, const void *b)
{
    int64_t x = ((const RowRun *)a)->lo, y = ((const RowRun *)b)->lo;
    return (x > y) - (x < y);
}

/* Whether t[0:n] strictly rises (up) or strictly falls. */
VECTOR_CLONES static int
strictly_monotone(const int64_t *t, Py_ssize_t n, int up)
{
    int64_t bad = 0;
    if (up)
        for (Py_ssize_t j = 1; j < n; j++)
            bad |= t[j] <= t[j - 1];
    else
        for (Py_ssize_t j = 1; j < n; j++)
            bad |= t[j] >= t[j - 1];
    return !bad;
}

/* Whether two runs of n slots read the same way (1: forwards from a and b, -1: backwards) alternate in target:
 * a's first < b's first < a's second < ... < a's last < b's last. */
VECTOR_CLONES static int
alternating(const int64_t *t, Py_ssize_t a, Py_ssize_t b, Py_ssize_t step, Py_ssize_t n)
{
    int64_t bad = t[a + (n - 1) * step] >= t[b + (n - 1) * step];
    if (step == 1)
        for (Py_ssize_t i = 0; i + 1 < n; i++)
            bad |= (t[a + i] >= t[b + i]) | (t[b + i] >= t[a + i + 1]);
    else
        for (Py_ssize_t i = 0; i + 1 < n; i++)
            bad |= (t[a - i] >= t[b - i]) | (t[b - i] >= t[a - i - 1]);
    return !bad;
}

static PyObject *
run_order(PyObject *Py_UNUSED(module), PyObject *args)
{
    Py_buffer tb, ob;
    Py_ssize_t page;
    if (!PyArg_ParseTuple(args, "y*nw*", &tb, &page, &ob))
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t n = tb.len / 8;
    if (tb.len % 8 || ob.len != tb.len || page < 2 || n % page) {
        PyErr_SetString(PyExc_ValueError, "run_order: inconsistent arguments");
        goto done;
    }
    Py_ssize_t rows = n / page;
    RowRun *runs = PyMem_Malloc((size_t)(rows ? rows : 1) * sizeof(RowRun));
    if (runs == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    const int64_t *target = (const int64_t *)tb.buf;
    int64_t *order = (int64_t *)ob.buf;
    int ok = 1;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t r = 0; r < rows && ok; r++) { /* each row strictly monotone, one way */
        const int64_t *t = target + r * page;
        int up = t[1] > t[0];
        ok = strictly_monotone(t, page, up);
        runs[r].lo = up ? t[0] : t[page - 1];
        runs[r].hi = up ? t[page - 1] : t[0];
        runs[r].first = up ? r * page : r * page + page - 1;
        runs[r].step = up ? 1 : -1;
    }
    if (ok)
        qsort(runs, (size_t)rows, sizeof(RowRun), row_run_cmp);
    Py_ssize_t m = 0;
    for (Py_ssize_t k = 0; k < rows && ok;) {
        RowRun a = runs[k]; /* the runs in order of their least targets: a's is the lower */
        if (k + 1 < rows && runs[k + 1].lo <= a.hi) { /* two runs overlap: merged, if no third one does */
            RowRun b = runs[k + 1];
            int64_t hi = a.hi > b.hi ? a.hi : b.hi;
            if (k + 2 < rows && runs[k + 2].lo <= hi) {
                ok = 0;
                break;
            }
            /* the two labels of a range of bins: their targets alternate, so the order is known without the
             * merge's chain of compares */
            if (a.step == b.step && alternating(target, a.first, b.first, a.step, page)) {
                for (Py_ssize_t i = 0; i < page; i++) {
                    order[m++] = a.first + i * a.step;
                    order[m++] = b.first + i * b.step;
                }
                k += 2;
                continue;
            }
            Py_ssize_t i = 0, j = 0;
            while (i < page && j < page) {
                int64_t sa = a.first + i * a.step, sb = b.first + j * b.step;
                int64_t ta = target[sa], tb_ = target[sb];
                ok &= ta != tb_; /* a shared target: the stable order is numpy's to give */
                int take_a = ta < tb_;
                order[m++] = take_a ? sa : sb;
                i += take_a;
                j += !take_a;
            }
            for (; i < page; i++)
                order[m++] = a.first + i * a.step;
            for (; j < page; j++)
                order[m++] = b.first + j * b.step;
            k += 2;
        }
        else {
            for (Py_ssize_t i = 0; i < page; i++)
                order[m++] = a.first + i * a.step;
            k += 1;
        }
    }
    Py_END_ALLOW_THREADS
    PyMem_Free(runs);
    result = PyBool_FromLong(ok);
done:
    PyBuffer_Release(&tb);
    PyBuffer_Release(&ob);
    return result;
}

PyDoc_STRVAR(layout_cells_doc,
"layout_cells(target, order, cells, keys) -> int\n\n"
"The layout a report's gather reads: `target` (int64) holds each slot's key * 2 + label and `order` (int64)\n"
"the slots in ascending order of target, each once. Writes into `cells` (int32) each slot's cell, the rank\n"
"of its key among the distinct keys times 2 plus its label, and into `keys` (int64, as long as `target`)\n"
"the distinct keys ascending; returns how many. The numbers of LabelledCounts._histogram_layout.");

static PyObject *
layout_cells(PyObject *Py_UNUSED(module), PyObject *args)
{
    Py_buffer tb, ob, cb, kb;
    if (!PyArg_ParseTuple(args, "y*y*w*w*", &tb, &ob, &cb, &kb))
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t n = tb.len / 8, m = 0;
    if (tb.len % 8 || ob.len != tb.len || kb.len != tb.len || cb.len != n * (Py_ssize_t)sizeof(int32_t) ||
        n > INT32_MAX / 2) {
        PyErr_SetString(PyExc_ValueError, "layout_cells: inconsistent arguments");
        goto done;
    }
    const int64_t *target = (const int64_t *)tb.buf, *order = (const int64_t *)ob.buf;
    int32_t *cells = (int32_t *)cb.buf;
    int64_t *keys = (int64_t *)kb.buf;
    int bad = 0;
    Py_BEGIN_ALLOW_THREADS
    memset(cells, 0xFF, (size_t)n * sizeof(int32_t)); /* -1: a slot not placed yet */
    int64_t last = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        int64_t slot = order[i];
        if (slot < 0 || slot >= n || cells[slot] != -1 || (i > 0 && target[slot] < last)) {
            bad = 1; /* not each slot once, in ascending order of target */
            break;
        }
        last = target[slot];
        int64_t label = last & 1, key = (last - label) / 2; /* numpy's >> 1, also for negative keys */
        if (m == 0 || key != keys[m - 1])
            keys[m++] = key;
        cells[slot] = (int32_t)(2 * (m - 1) + label);
    }
    Py_END_ALLOW_THREADS
    if (bad)
        PyErr_SetString(PyExc_ValueError, "layout_cells: order is not each slot once, by ascending target");
    else
        result = PyLong_FromSsize_t(m);
done:
    PyBuffer_Release(&tb);
    PyBuffer_Release(&ob);
    PyBuffer_Release(&cb);
    PyBuffer_Release(&kb);
    return result;
}

PyDoc_STRVAR(gather_bins_doc,
"gather_bins(counts, weighted, cells, rows, keys, split_key, out_keys, out_neg, out_pos, out_split) -> int\n\n"
"Adds every stored count (int64 or, weighted, float64) to the cell its slot holds in `cells` (int32,\n"
"bin * 2 + label; the sums start at 0 and take the slots in order), then writes the key and the negative\n"
"and positive counts of every bin holding a count into the `out_` arrays (as long as `keys`, ascending);\n"
"returns how many. The sums of LabelledCounts.histogram. `rows` (int64, one per row of 128 slots) tells\n"
"the rows whose cells run by steps of 2: its first cell * 2, plus 1 where they run down; -1 for another\n"
"row (its slots are read one by one). `out_split` (int64, 5) takes how many of those bins have keys up to\n"
"`split_key` and, for whole counts, their negatives and positives, then those of the bins above.");

/* Each row's counts added to its cells: a row whose cells run by steps of 2 (one label, consecutive bins: every
 * row of the range-free scheme) as a block into that label's sums, any other slot by slot; in slot order, so that
 * weights sum in the order of the numpy twin. Nonzero at a cell outside the bins. */
#define GATHER_ROWS(NAME, T)                                                                                 \
    VECTOR_CLONES static int NAME(const T *restrict counts, const int32_t *restrict cells,                   \
                                  const int64_t *restrict rows, Py_ssize_t n_rows, Py_ssize_t n_bins,        \
                                  T *restrict neg_sums, T *restrict pos_sums)                                \
    {                                                                                                        \
        for (Py_ssize_t r = 0; r < n_rows; r++) {                                                            \
            const T *from = counts + (r << PAGE_BITS);                                                       \
            int64_t row = rows[r];                                                                           \
            if (row >= 0) {                                                                                  \
                int64_t first = row >> 1, last = (row & 1) ? first - 2 * PAGE_MASK : first + 2 * PAGE_MASK;  \
                if (first >= 2 * n_bins || last < 0 || last >= 2 * n_bins)                                   \
                    return 1;                                                                                \
                T *to = ((first & 1) ? pos_sums : neg_sums) + (first >> 1);                                  \
                if (row & 1)                                                                                 \
                    for (Py_ssize_t j = 0; j <= (Py_ssize_t)PAGE_MASK; j++)                                  \
                        to[-j] += from[j];                                                                   \
                else                                                                                         \
                    for (Py_ssize_t j = 0; j <= (Py_ssize_t)PAGE_MASK; j++)                                  \
                        to[j] += from[j];                                                                    \
                continue;                                                                                    \
            }                                                                                                \
            const int32_t *own = cells + (r << PAGE_BITS);                                                   \
            for (Py_ssize_t j = 0; j <= (Py_ssize_t)PAGE_MASK; j++) {                                        \
                uint32_t cell = (uint32_t)own[j];                                                            \
                if (cell >= (uint64_t)(2 * n_bins))                                                          \
                    return 1;                                                                                \
                ((cell & 1) ? pos_sums : neg_sums)[cell >> 1] += from[j];                                    \
            }                                                                                                \
        }                                                                                                    \
        return 0;                                                                                            \
    }
GATHER_ROWS(gather_whole_rows, int64_t)
GATHER_ROWS(gather_weighted_rows, double)

/* The bins [from, to) holding a count, in order of key, appended at out_*[m]: the new m; for whole counts
 * (WHOLE), the negatives and positives of those bins added to sums[0] and sums[1] too (float counts are not
 * summed: their sums are numpy's, in its order). */
#define COMPACT_BINS(NAME, T, WHOLE)                                                                         \
    VECTOR_CLONES static Py_ssize_t NAME(const T *restrict neg_sums, const T *restrict pos_sums,            \
                                         const int64_t *restrict keys, Py_ssize_t from, Py_ssize_t to,      \
                                         int64_t *restrict out_keys, T *restrict out_neg, T *restrict out_pos, \
                                         Py_ssize_t m, int64_t *restrict sums)                             \
    {                                                                                                        \
        int64_t neg_sum = 0, pos_sum = 0;                                                                    \
        for (Py_ssize_t b = from; b < to; b++) {                                                             \
            T neg = neg_sums[b], pos = pos_sums[b];                                                          \
            out_keys[m] = keys[b];                                                                           \
            out_neg[m] = neg;                                                                                \
            out_pos[m] = pos;                                                                                \
            m += (neg != 0) | (pos != 0);                                                                    \
            if (WHOLE) {                                                                                     \
                neg_sum += (int64_t)neg;                                                                     \
                pos_sum += (int64_t)pos;                                                                     \
            }                                                                                                \
        }                                                                                                    \
        if (WHOLE) {                                                                                         \
            sums[0] += neg_sum;                                                                              \
            sums[1] += pos_sum;                                                                              \
        }                                                                                                    \
        return m;                                                                                            \
    }
COMPACT_BINS(compact_whole_bins, int64_t, 1)
COMPACT_BINS(compact_weighted_bins, double, 0)

/* The same compaction eight bins at a time with AVX-512's compress (5,120 bins, 3,124 holding a count, in a
 * loop of its own: 2.0 against 5.0 us a call; gather_bins on a report's 5,120 bins: 5.5 against 7.6 us). The
 * loop above stores every bin and moves m on past those that hold a count, one bin after another; here each
 * register of eight is compressed to the bins that hold one and stored whole at m (its lanes past them are
 * overwritten by the next store, or lie past the m returned): m <= b, so a store ends by b + 8 <= to, inside the
 * out_ arrays, which are as long as keys. Used where the processor has AVX-512F (use_compress). */
#if defined(__GNUC__) && defined(__x86_64__) && defined(__has_attribute)
#if __has_attribute(target)
#define HAVE_COMPRESS 1
#endif
#endif
#ifdef HAVE_COMPRESS
#include <immintrin.h>
#define COMPACT_BINS_512(NAME, T, WHOLE, NONZERO)                                                             \
    __attribute__((target("avx512f"))) static Py_ssize_t NAME(                                               \
        const T *restrict neg_sums, const T *restrict pos_sums, const int64_t *restrict keys, Py_ssize_t from, \
        Py_ssize_t to, int64_t *restrict out_keys, T *restrict out_neg, T *restrict out_pos, Py_ssize_t m,   \
        int64_t *restrict sums)                                                                              \
    {                                                                                                        \
        __m512i neg_sum = _mm512_setzero_si512(), pos_sum = _mm512_setzero_si512();                          \
        Py_ssize_t b = from;                                                                                 \
        for (; b + 8 <= to; b += 8) {                                                                        \
            __m512i neg = _mm512_loadu_si512(neg_sums + b), pos = _mm512_loadu_si512(pos_sums + b);          \
            __mmask8 keep = NONZERO(neg) | NONZERO(pos);                                                     \
            __m512i key = _mm512_loadu_si512(keys + b);                                                      \
            _mm512_storeu_si512(out_keys + m, _mm512_maskz_compress_epi64(keep, key));                       \
            _mm512_storeu_si512(out_neg + m, _mm512_maskz_compress_epi64(keep, neg));                        \
            _mm512_storeu_si512(out_pos + m, _mm512_maskz_compress_epi64(keep, pos));                        \
            m += __builtin_popcount((unsigned)keep);                                                         \
            if (WHOLE) {                                                                                     \
                neg_sum = _mm512_add_epi64(neg_sum, neg);                                                    \
                pos_sum = _mm512_add_epi64(pos_sum, pos);                                                    \
            }                                                                                                \
        }                                                                                                    \
        if (WHOLE) {                                                                                         \
            sums[0] += _mm512_reduce_add_epi64(neg_sum);                                                     \
            sums[1] += _mm512_reduce_add_epi64(pos_sum);                                                     \
        }                                                                                                    \
        return NAME##_rest(neg_sums, pos_sums, keys, b, to, out_keys, out_neg, out_pos, m, sums);           \
    }
#define WHOLE_NONZERO(V) _mm512_test_epi64_mask((V), (V))
/* a float count is kept where it is != 0 (NaN too), as in the loop above: compared unordered */
#define FLOAT_NONZERO(V) _mm512_cmp_pd_mask(_mm512_castsi512_pd(V), _mm512_setzero_pd(), _CMP_NEQ_UQ)
#define compact_whole_bins_512_rest compact_whole_bins
#define compact_weighted_bins_512_rest compact_weighted_bins
COMPACT_BINS_512(compact_whole_bins_512, int64_t, 1, WHOLE_NONZERO)
COMPACT_BINS_512(compact_weighted_bins_512, double, 0, FLOAT_NONZERO)
static int use_compress = 0; /* the compaction on AVX-512's compress: where the processor has it (set when the
                               * module loads), unless compress_paths switches it off */

/* Whether the processor has AVX-512F (asked when the module loads, and by compress_paths). */
static int
compress_supported(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") ? 1 : 0;
}
#endif

PyDoc_STRVAR(compress_paths_doc,
"compress_paths(enabled) -> bool\n\n"
"Whether gather_bins compacts its bins with AVX-512's compress; `enabled` False switches it off (the plain\n"
"loop runs: the same results), True on where the processor has AVX-512F, None asks. For tests of both.");

static PyObject *
compress_paths(PyObject *Py_UNUSED(module), PyObject *enabled)
{
#ifdef HAVE_COMPRESS
    if (enabled != Py_None) {
        int on = PyObject_IsTrue(enabled);
        if (on < 0)
            return NULL;
        use_compress = on && compress_supported();
    }
    return PyBool_FromLong(use_compress);
#else
    (void)enabled;
    return Py_NewRef(Py_False);
#endif
}

/* The bins holding a count into the out_ arrays; the split at split_key and, for whole counts, the sums on either
 * side of it. */
#define GATHER_BINS(T, COMPACT)                                                                    \
    do {                                                                                                  \
        const T *neg_sums = (const T *)tmp, *pos_sums = neg_sums + n_bins;                                \
        int64_t part[4] = {0, 0, 0, 0}; /* negatives and positives up to the cut, then above it */       \
        m = COMPACT(neg_sums, pos_sums, keys, 0, cut, out_keys, (T *)onb.buf, (T *)opb.buf, 0, part);      \
        start = m;                                                                                        \
        m = COMPACT(neg_sums, pos_sums, keys, cut, n_bins, out_keys, (T *)onb.buf, (T *)opb.buf, m, part + 2); \
        split[0] = start;                                                                                 \
        memcpy(split + 1, part, sizeof(part));                                                            \
    } while (0)

static PyObject *
gather_bins(PyObject *Py_UNUSED(module), PyObject *args)
{
    Py_buffer cb, tb, rb, kb, okb, onb, opb, osb;
    int weighted;
    long long split_key;
    if (!PyArg_ParseTuple(args, "y*py*y*y*Lw*w*w*w*", &cb, &weighted, &tb, &rb, &kb, &split_key, &okb, &onb, &opb,
                          &osb))
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t n = cb.len / 8, n_bins = kb.len / (Py_ssize_t)sizeof(int64_t), n_rows = n >> PAGE_BITS;
    if (cb.len % 8 || n % (PAGE_MASK + 1) || tb.len != n * (Py_ssize_t)sizeof(int32_t) ||
        rb.len != n_rows * (Py_ssize_t)sizeof(int64_t) || kb.len % 8 || okb.len != kb.len || onb.len != kb.len ||
        opb.len != kb.len || osb.len != 5 * (Py_ssize_t)sizeof(int64_t) || n_bins > (1 << 29)) {
        PyErr_SetString(PyExc_ValueError, "gather_bins: inconsistent arguments");
        goto done;
    }
    void *tmp = PyMem_Calloc((size_t)(2 * n_bins + 1), 8);
    if (tmp == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    const int32_t *cells = (const int32_t *)tb.buf;
    const int64_t *rows = (const int64_t *)rb.buf, *keys = (const int64_t *)kb.buf;
    int64_t *out_keys = (int64_t *)okb.buf, *split = (int64_t *)osb.buf;
    Py_ssize_t m = 0, start = 0, cut = 0, hi = n_bins; /* cut: the first bin whose key is above split_key */
    while (cut < hi) {
        Py_ssize_t mid = cut + (hi - cut) / 2;
        if (keys[mid] <= split_key)
            cut = mid + 1;
        else
            hi = mid;
    }
    int bad = 0;
    Py_BEGIN_ALLOW_THREADS
    if (weighted)
        bad = gather_weighted_rows((const double *)cb.buf, cells, rows, n_rows, n_bins, (double *)tmp,
                                   (double *)tmp + n_bins);
    else
        bad = gather_whole_rows((const int64_t *)cb.buf, cells, rows, n_rows, n_bins, (int64_t *)tmp,
                                (int64_t *)tmp + n_bins);
#ifdef HAVE_COMPRESS
    if (!bad && weighted && use_compress)
        GATHER_BINS(double, compact_weighted_bins_512);
    else if (!bad && use_compress)
        GATHER_BINS(int64_t, compact_whole_bins_512);
    else
#endif
    if (!bad && weighted)
        GATHER_BINS(double, compact_weighted_bins);
    else if (!bad)
        GATHER_BINS(int64_t, compact_whole_bins);
    Py_END_ALLOW_THREADS
    PyMem_Free(tmp);
    if (bad)
        PyErr_SetString(PyExc_ValueError, "gather_bins: inconsistent arguments");
    else
        result = PyLong_FromSsize_t(m);
done:
    PyBuffer_Release(&cb);
    PyBuffer_Release(&tb);
    PyBuffer_Release(&rb);
    PyBuffer_Release(&kb);
    PyBuffer_Release(&okb);
    PyBuffer_Release(&onb);
    PyBuffer_Release(&opb);
    PyBuffer_Release(&osb);
    return result;
}

PyDoc_STRVAR(auc_sums_doc,
"auc_sums(neg, pos) -> (lower, ties, positives, negatives) or None\n\n"
"For whole counts (int64, >= 0) per bin in ascending order: the sum over bins of the positives times the\n"
"negatives in lower bins, the sum of positives times negatives in each bin, and the totals, all exact; None\n"
"when positives times negatives reaches 2**53 (their floats would no longer be exact).");

/* The sums of auc_sums (whether they fit): first the totals, checked block by block, with the negatives in
 * bins before each quarter of the bins; then the lower sum over the four quarters at once, each from its own
 * negatives below (four chains of additions instead of one: a call on 3,148 bins, 2.1 against 3.3 us). */
VECTOR_CLONES static void
auc_block_sums(const int64_t *restrict neg, const int64_t *restrict pos, Py_ssize_t from, Py_ssize_t to,
               uint64_t *restrict sums)
{
    uint64_t seen = 0, n_sum = 0, p_sum = 0, ties = 0;
    for (Py_ssize_t i = from; i < to; i++) {
        uint64_t ng = (uint64_t)neg[i], ps = (uint64_t)pos[i];
        seen |= ng | ps;
        n_sum += ng;
        p_sum += ps;
        ties += ps * ng;
    }
    sums[0] |= seen;
    sums[1] += n_sum;
    sums[2] += p_sum;
    sums[3] += ties;
}

static int
auc_sums_of(const int64_t *neg, const int64_t *pos, Py_ssize_t n, uint64_t *lower_out, uint64_t *ties_out,
            uint64_t *p_out, uint64_t *n_out)
{
    /* a negative count sets the top bit of `seen`, one of 2 ** 53 or more a bit at or above 53; counts below
     * 2 ** 53 add less than 2 ** 63 over a block of 1,024, so totals below 2 ** 53 at a block's start never
     * wrap within it. The sums of a block that fails are not used. */
    Py_ssize_t quarter = (n + 3) / 4;
    uint64_t sums[4] = {0, 0, 0, 0}, below[4] = {0, 0, 0, 0}; /* seen, negatives, positives, ties */
    int fits = 1;
    for (int c = 0; c < 4 && fits; c++) {
        below[c] = sums[1];
        Py_ssize_t end = (c + 1) * quarter < n ? (c + 1) * quarter : n;
        for (Py_ssize_t from = c * quarter; from < end && fits; from += 1024) {
            auc_block_sums(neg, pos, from, end - from > 1024 ? from + 1024 : end, sums);
            fits = (sums[0] >> 53) == 0 && sums[1] < ((uint64_t)1 << 53) && sums[2] < ((uint64_t)1 << 53);
        }
    }
    uint64_t p_total = sums[2], n_total = sums[1];
    /* every product and partial sum is at most positives x negatives: below 2 ** 53, so no overflow */
    fits = fits && (p_total == 0 || n_total < (((uint64_t)1 << 53) + p_total - 1) / p_total) &&
           p_total * n_total < ((uint64_t)1 << 53);
    if (!fits)
        return 0;
    /* the quarters side by side: the last is the shortest, by at most 3 bins */
    uint64_t low[4] = {0, 0, 0, 0};
    Py_ssize_t last = n - 3 * quarter > 0 ? n - 3 * quarter : 0, j = 0;
    for (; j < last; j++)
        for (int c = 0; c < 4; c++) {
            Py_ssize_t i = c * quarter + j;
            low[c] += (uint64_t)pos[i] * below[c];
            below[c] += (uint64_t)neg[i];
        }
    for (int c = 0; c < 4; c++)
        for (Py_ssize_t i = c * quarter + j, end = (c + 1) * quarter < n ? (c + 1) * quarter : n; i < end; i++) {
            low[c] += (uint64_t)pos[i] * below[c];
            below[c] += (uint64_t)neg[i];
        }
    *lower_out = low[0] + low[1] + low[2] + low[3];
    *ties_out = sums[3];
    *p_out = p_total;
    *n_out = n_total;
    return 1;
}

static PyObject *
auc_sums(PyObject *Py_UNUSED(module), PyObject *args)
{
    Py_buffer nb, pb;
    if (!PyArg_ParseTuple(args, "y*y*", &nb, &pb))
        return NULL;
    PyObject *result = NULL;
    if (nb.len % 8 || pb.len != nb.len) {
        PyErr_SetString(PyExc_ValueError, "auc_sums: inconsistent arguments");
        goto done;
    }
    Py_ssize_t n = nb.len / 8;
    const int64_t *neg = (const int64_t *)nb.buf, *pos = (const int64_t *)pb.buf;
    uint64_t p_total = 0, n_total = 0, lower = 0, ties = 0;
    int fits = 0;
    Py_BEGIN_ALLOW_THREADS
    fits = auc_sums_of(neg, pos, n, &lower, &ties, &p_total, &n_total);
    Py_END_ALLOW_THREADS
    if (fits)
        result = Py_BuildValue("KKKK", (unsigned long long)lower, (unsigned long long)ties,
                               (unsigned long long)p_total, (unsigned long long)n_total);
    else
        result = Py_NewRef(Py_None);
done:
    PyBuffer_Release(&nb);
    PyBuffer_Release(&pb);
    return result;
}

/* Set the bit of score v's hash (the top bits of its bits times a golden-ratio constant, `shift` = 64 less the
 * table's bits) in `table`; whether it was clear: equal scores set one bit, so more bits set than a budget
 * prove more distinct scores. */
static inline int
hash_bit_set(uint64_t *table, double v, int shift)
{
    v += 0.0; /* -0.0 and 0.0 are one score */
    uint64_t u;
    memcpy(&u, &v, 8);
    uint64_t h = (u * 0x9E3779B97F4A7C15ULL) >> shift;
    uint64_t bit = (uint64_t)1 << (h & 63), *word = &table[h >> 6];
    int clear = (*word & bit) == 0;
    *word |= bit;
    return clear;
}

PyDoc_STRVAR(more_distinct_than_doc,
"more_distinct_than(x, limit) -> bool\n\n"
"Whether the float64 scores `x` surely hold more than `limit` distinct values: each score (-0.0 as 0.0) sets\n"
"one bit of a table of at least 16 * limit bits, chosen by a hash of its bits, and equal scores set the same\n"
"bit, so more bits set than `limit` proves it. Looks at no more than 2 * limit + 64 scores; False means\n"
"not proven (few distinct scores, or too many hash collisions), not that they fit.");

static PyObject *
more_distinct_than(PyObject *Py_UNUSED(module), PyObject *args)
{
    Py_buffer xb;
    Py_ssize_t limit;
    if (!PyArg_ParseTuple(args, "y*n", &xb, &limit))
        return NULL;
    PyObject *result = NULL;
    if (xb.len % 8 || limit < 0 || limit > ((Py_ssize_t)1 << 24)) {
        PyErr_SetString(PyExc_ValueError, "more_distinct_than: inconsistent arguments");
        goto done;
    }
    Py_ssize_t n = xb.len / 8, look = 2 * limit + 64;
    if (n <= limit) { /* cannot hold more */
        result = Py_NewRef(Py_False);
        goto done;
    }
    int bits_log2 = 12;
    while (((Py_ssize_t)1 << bits_log2) < 16 * limit)
        bits_log2++;
    uint64_t *table = PyMem_Calloc(((size_t)1 << bits_log2) / 64, sizeof(uint64_t));
    if (table == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    const double *x = (const double *)xb.buf;
    Py_ssize_t set = 0, end = n < look ? n : look;
    int shift = 64 - bits_log2;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < end && set <= limit; i++) {
        set += hash_bit_set(table, x[i], shift);
    }
    Py_END_ALLOW_THREADS
    PyMem_Free(table);
    result = PyBool_FromLong(set > limit);
done:
    PyBuffer_Release(&xb);
    return result;
}

PyDoc_STRVAR(more_distinct_than_grouped_doc,
"more_distinct_than_grouped(x, groups, group_width, lo, lookup, which, limit) -> bytes\n\n"
"more_distinct_than for each group of a batch (event i in group ``lookup[groups[i] - lo]``) that ``which`` (one\n"
"byte a group) marks: one byte a group, 1 where more than `limit` distinct scores of that group are proven (at most\n"
"64 groups marked). Each marked group reads its first 2 * limit + 64 events; the pass ends when every marked\n"
"group has its answer.");

static PyObject *
more_distinct_than_grouped(PyObject *Py_UNUSED(module), PyObject *args)
{
    Py_buffer xb, which;
    Groups g = {0};
    Py_ssize_t limit;
    if (!PyArg_ParseTuple(args, "y*y*iLy*y*n", &xb, &g.values, &g.width, &g.lo, &g.lut, &which, &limit))
        return NULL;
    PyObject *result = NULL;
    uint64_t *tables = NULL;
    Py_ssize_t *set = NULL, *seen = NULL;
    int32_t *slot = NULL; /* each group's table, or -1 */
    Py_ssize_t n = xb.len / 8;
    g.k = which.len;
    if (xb.len % 8 || !groups_ok(&g, n) || limit < 0 || limit > ((Py_ssize_t)1 << 24)) {
        PyErr_SetString(PyExc_ValueError, "more_distinct_than_grouped: inconsistent arguments");
        goto done;
    }
    Py_ssize_t marked = 0, look = 2 * limit + 64;
    const uint8_t *w = (const uint8_t *)which.buf;
    slot = PyMem_Malloc((size_t)g.k * sizeof(int32_t));
    if (slot == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t t = 0; t < g.k; t++)
        slot[t] = w[t] ? (int32_t)marked++ : -1;
    if (marked > 64) {
        PyErr_SetString(PyExc_ValueError, "more_distinct_than_grouped: inconsistent arguments");
        goto done;
    }
    int bits_log2 = 12;
    while (((Py_ssize_t)1 << bits_log2) < 16 * limit)
        bits_log2++;
    size_t words = ((size_t)1 << bits_log2) / 64;
    tables = PyMem_Calloc(words * (size_t)(marked ? marked : 1), sizeof(uint64_t));
    set = PyMem_Calloc((size_t)(marked ? marked : 1), sizeof(Py_ssize_t));
    seen = PyMem_Calloc((size_t)(marked ? marked : 1), sizeof(Py_ssize_t));
    if (tables == NULL || set == NULL || seen == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    const double *x = (const double *)xb.buf;
    const char *groups = (const char *)g.values.buf;
    const int32_t *lut = (const int32_t *)g.lut.buf;
    int shift = 64 - bits_log2, bad = 0;
    Py_ssize_t open = marked; /* marked groups without their answer yet */
    int32_t chunk_groups[CHUNK];
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n && open > 0 && !bad; i += CHUNK) {
        Py_ssize_t m = n - i < CHUNK ? n - i : CHUNK;
        if (groups_chunk(groups, g.width, i, m, g.lo, lut, g.span, (int32_t)g.k, chunk_groups)) {
            bad = 1;
            break;
        }
        for (Py_ssize_t j = 0; j < m; j++) {
            int32_t s = slot[chunk_groups[j]];
            if (s < 0 || seen[s] >= look || set[s] > limit)
                continue;
            set[s] += hash_bit_set(tables + (size_t)s * words, x[i + j], shift);
            open -= ++seen[s] == look || set[s] == limit + 1;
        }
    }
    Py_END_ALLOW_THREADS
    if (bad) {
        PyErr_SetString(PyExc_ValueError, "more_distinct_than_grouped: inconsistent arguments");
        goto done;
    }
    result = PyBytes_FromStringAndSize(NULL, g.k);
    if (result != NULL) {
        char *out = PyBytes_AS_STRING(result);
        for (Py_ssize_t t = 0; t < g.k; t++)
            out[t] = (char)(slot[t] >= 0 && set[slot[t]] > limit);
    }
done:
    PyMem_Free(tables);
    PyMem_Free(set);
    PyMem_Free(seen);
    PyMem_Free(slot);
    PyBuffer_Release(&xb);
    PyBuffer_Release(&g.values);
    PyBuffer_Release(&g.lut);
    PyBuffer_Release(&which);
    return result;
}

PyDoc_STRVAR(ap_terms_doc,
"ap_terms(p, n, t, above, logs, scratch, out) -> None\n\n"
"Average precision's terms of bins with whole counts (curves.average_precision_bounds), for float64 arrays of\n"
"the bins' positives p, negatives n, true positives t and predicted positives `above` in higher bins.\n"
"With `logs` None `out` (2 rows as long as p) takes the arguments of log1p in the two digamma\n"
"differences, and `scratch` (5 rows) the rest of them; then, with `logs` (those rows' log1p, as numpy gives\n"
"them) and the same `scratch`, `out` takes each bin's lower and expected term. The same operations in the\n"
"same order as the numpy path, with no fused multiply-adds.");

#define DIGAMMA_SHIFT 12

/* psi(w) - ln(w) from r = 1 / w and w2 = r * r: one division an argument */
#define DIGAMMA_TAIL(r, w2)                                                                                 \
    (-0.5 * (r) - (w2) * (1.0 / 12 - (w2) * (1.0 / 120 - (w2) * (1.0 / 252 - (w2) * (1.0 / 240 - (w2) * (1.0 / 132))))))

/* as curves._digamma_terms: psi(z) = ln(w) + tail - shift, with w >= 12 */
NO_FUSED_MATH static void
digamma_terms(double z, double *w, double *shift, double *tail)
{
    double total = 0.0, count = 0.0, v = z;
    if (z < DIGAMMA_SHIFT) {
        for (int i = 0; i < DIGAMMA_SHIFT; i++) {
            double step = z + (double)i;
            if (step < DIGAMMA_SHIFT) {
                total += 1.0 / step;
                count += 1.0;
            }
        }
        v = z + count;
    }
    double r = 1.0 / v;
    *w = v;
    *shift = total;
    *tail = DIGAMMA_TAIL(r, r * r);
}

/* The digamma differences' log1p arguments (out) and the three tails, of N + 1, N + n + 1 and N + m + 1
 * (scratch rows 2 to 4; rows 0 and 1, the shift differences, start at 0.0, set by the caller). Bins whose
 * arguments are all at least 12 (N + 1 >= 12) take no shift: a loop of plain arithmetic, vectorised; the few
 * others are done again one by one, with the shift. */
VECTOR_CLONES NO_FUSED_MATH static void
ap_arguments(const double *restrict p, const double *restrict n, const double *restrict above,
             double *restrict scratch, double *restrict out, Py_ssize_t k)
{
    for (Py_ssize_t b = 0; b < k; b++) {
        double x = above[b] + 1, m = p[b] + n[b];
        double a0 = x, a1 = x + n[b], a2 = x + m;
        double r0 = 1.0 / a0, r1 = 1.0 / a1, r2 = 1.0 / a2;
        out[b] = (a2 - a1) * r1;
        out[k + b] = (a2 - a0) * r0;
        scratch[2 * k + b] = DIGAMMA_TAIL(r0, r0 * r0);
        scratch[3 * k + b] = DIGAMMA_TAIL(r1, r1 * r1);
        scratch[4 * k + b] = DIGAMMA_TAIL(r2, r2 * r2);
    }
}

NO_FUSED_MATH static void
ap_arguments_near_zero(const double *p, const double *n, const double *above, double *scratch, double *out,
                       Py_ssize_t k)
{
    static const int first[2] = {1, 0}, second[2] = {2, 2};
    for (Py_ssize_t b = 0; b < k; b++) {
        double x = above[b] + 1;
        if (!(x < DIGAMMA_SHIFT))
            continue;
        double m = p[b] + n[b];
        double args[3] = {x, x + n[b], x + m}, w[3], shift[3], tail[3];
        for (int a = 0; a < 3; a++) {
            digamma_terms(args[a], &w[a], &shift[a], &tail[a]);
            scratch[(2 + a) * k + b] = tail[a];
        }
        for (int r = 0; r < 2; r++) {
            out[r * k + b] = (w[second[r]] - w[first[r]]) * (1.0 / w[first[r]]);
            scratch[r * k + b] = shift[first[r]] - shift[second[r]];
        }
    }
}

/* Each bin's lower and expected term from the log1p of the arguments and the scratch rows. */
VECTOR_CLONES NO_FUSED_MATH static void
ap_combine(const double *restrict p, const double *restrict n, const double *restrict t,
           const double *restrict above, const double *restrict logs, const double *restrict scratch,
           double *restrict out, Py_ssize_t k)
{
    const double *tail = scratch + 2 * k;
    for (Py_ssize_t b = 0; b < k; b++) {
        double b12 = scratch[b] + logs[b] + tail[2 * k + b] - tail[k + b];
        double b02 = scratch[k + b] + logs[k + b] + tail[2 * k + b] - tail[b];
        double x = above[b] + 1, m = p[b] + n[b];
        double d = m - 1, bb = m > 1 ? (p[b] - 1) / (d > 1 ? d : 1.0) : 0.0;
        out[b] = p[b] + (t[b] - above[b] - n[b]) * b12;
        out[k + b] = p[b] / m * (bb * m + (t[b] + 1 - bb * x) * b02);
    }
}

static PyObject *
ap_terms(PyObject *Py_UNUSED(module), PyObject *args)
{
    Py_buffer pb, nb, tb, ab, lb = {0}, sb, ob;
    PyObject *logs;
    if (!PyArg_ParseTuple(args, "y*y*y*y*Ow*w*", &pb, &nb, &tb, &ab, &logs, &sb, &ob))
        return NULL;
    PyObject *result = NULL;
    int given = logs != Py_None;
    if (given && PyObject_GetBuffer(logs, &lb, PyBUF_SIMPLE) < 0) {
        lb.obj = NULL;
        goto done;
    }
    Py_ssize_t k = pb.len / 8;
    if (pb.len % 8 || nb.len != pb.len || tb.len != pb.len || ab.len != pb.len || ob.len != 2 * pb.len ||
        sb.len != 5 * pb.len || (given && lb.len != 2 * pb.len)) {
        PyErr_SetString(PyExc_ValueError, "ap_terms: inconsistent arguments");
        goto done;
    }
    const double *p = (const double *)pb.buf, *n = (const double *)nb.buf, *above = (const double *)ab.buf;
    double *scratch = (double *)sb.buf, *out = (double *)ob.buf;
    Py_BEGIN_ALLOW_THREADS
    if (!given) {
        /* the shift differences: 0.0 where no argument is shifted. Set apart from the arithmetic, whose loop GCC
         * 12 does not vectorise with these constant stores in it (24.5 against 6.7 us on 2,707 bins) */
        memset(scratch, 0, (size_t)(2 * k) * sizeof(double));
        ap_arguments(p, n, above, scratch, out, k);
        ap_arguments_near_zero(p, n, above, scratch, out, k);
    }
    else
        ap_combine(p, n, (const double *)tb.buf, above, (const double *)lb.buf, scratch, out, k);
    Py_END_ALLOW_THREADS
    result = Py_NewRef(Py_None);
done:
    PyBuffer_Release(&pb);
    PyBuffer_Release(&nb);
    PyBuffer_Release(&tb);
    PyBuffer_Release(&ab);
    if (lb.obj != NULL)
        PyBuffer_Release(&lb);
    PyBuffer_Release(&sb);
    PyBuffer_Release(&ob);
    return result;
}

PyDoc_STRVAR(ap_bins_doc,
"ap_bins(neg, pos, tp, fp, rows) -> (k, positives) or None\n\n"
"The inputs of ap_terms from whole counts: of the bins (int64 neg, pos, ascending) with positives, in order,\n"
"into `rows` (float64, 4 rows, each as long as there are such bins or longer) their positives, negatives, the\n"
"true positives in higher bins (tp[-2::-1] of the curve points' float64 tp) and the predicted positives there\n"
"(that plus fp[-2::-1]); k of them, and the exact total of positives. None, writing nothing to trust, when a\n"
"count is negative or the positives reach 2**53 (their float sums would no longer be exact).");

static PyObject *
ap_bins(PyObject *Py_UNUSED(module), PyObject *args)
{
    Py_buffer nb, pb, tb, fb, rb;
    if (!PyArg_ParseTuple(args, "y*y*y*y*w*", &nb, &pb, &tb, &fb, &rb))
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t n = nb.len / 8, cap = rb.len / 32; /* each row's length */
    if (nb.len % 8 || pb.len != nb.len || tb.len != nb.len + 8 || fb.len != tb.len || rb.len % 32) {
        PyErr_SetString(PyExc_ValueError, "ap_bins: inconsistent arguments");
        goto done;
    }
    const int64_t *neg = (const int64_t *)nb.buf, *pos = (const int64_t *)pb.buf;
    const double *tp = (const double *)tb.buf, *fp = (const double *)fb.buf;
    double *rows = (double *)rb.buf;
    Py_ssize_t k = 0;
    uint64_t total = 0, seen = 0;
    int short_rows = 0;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n; i++) {
        seen |= (uint64_t)neg[i] | (uint64_t)pos[i]; /* a negative count sets the top bit */
        if (pos[i] <= 0)
            continue;
        total += (uint64_t)pos[i]; /* no wrap: below 2**53 before, plus a count below 2**63 */
        if (total >> 53 || seen >> 63)
            break;
        if (k == cap) {
            short_rows = 1;
            break;
        }
        double above = tp[n - 1 - i]; /* the point after bin i, from the top */
        rows[k] = (double)pos[i];
        rows[cap + k] = (double)neg[i];
        rows[2 * cap + k] = above;
        rows[3 * cap + k] = above + fp[n - 1 - i];
        k++;
    }
    Py_END_ALLOW_THREADS
    if (short_rows)
        PyErr_SetString(PyExc_ValueError, "ap_bins: rows shorter than the bins with positives");
    else if (total >> 53 || seen >> 63)
        result = Py_NewRef(Py_None);
    else
        result = Py_BuildValue("(nK)", k, (unsigned long long)total);
done:
    PyBuffer_Release(&nb);
    PyBuffer_Release(&pb);
    PyBuffer_Release(&tb);
    PyBuffer_Release(&fb);
    PyBuffer_Release(&rb);
    return result;
}

PyDoc_STRVAR(range_free_edges_doc,
"range_free_edges(keys, mantissa_bits, offset, key_max, out) -> None\n\n"
"The lower edges of range-free keys + `offset` (int64) into `out` (float64): RangeFreeBins._lower_edges, the\n"
"same bit operations and the same one float step up where s - 1 rounds below the bucket; +inf where the key +\n"
"`offset` passes `key_max` (the upper edges, with `offset` 1).");

static void
range_free_edges_of(const int64_t *keys, Py_ssize_t n, int m, int64_t offset, int64_t key_max, double *out)
{
    int shift = 52 - m;
    int64_t k_zero = (int64_t)2047 << m, k_upper = 2 * ((int64_t)1022 << m), upper_from = (int64_t)1022 << m;
    for (Py_ssize_t i = 0; i < n; i++) {
        int64_t key = keys[i] + offset;
        if (offset && key > key_max) {
            out[i] = Py_HUGE_VAL;
            continue;
        }
        int64_t k = key - k_zero;
        int upper = k >= upper_from;
        if (upper)
            k -= k_upper;
        int64_t ordered = (int64_t)((uint64_t)k << shift);
        int64_t bits = ordered < 0 ? (int64_t)((uint64_t)INT64_MIN - (uint64_t)ordered) : ordered;
        double edge;
        memcpy(&edge, &bits, 8);
        if (upper) {
            double s = edge + 1.0; /* may round below the bucket: one float up where it did */
            if (s - 1.0 < edge)
                s = nextafter(s, Py_HUGE_VAL);
            edge = s;
        }
        out[i] = edge;
    }
}

static PyObject *
range_free_edges(PyObject *Py_UNUSED(module), PyObject *args)
{
    Py_buffer kb, ob;
    int m;
    long long offset, key_max;
    if (!PyArg_ParseTuple(args, "y*iLLw*", &kb, &m, &offset, &key_max, &ob))
        return NULL;
    int fits = kb.len % 8 == 0 && ob.len == kb.len && m >= 1 && m <= 12 && (offset == 0 || offset == 1);
    if (fits) {
        Py_BEGIN_ALLOW_THREADS
        range_free_edges_of((const int64_t *)kb.buf, kb.len / 8, m, offset, key_max, (double *)ob.buf);
        Py_END_ALLOW_THREADS
    }
    else
        PyErr_SetString(PyExc_ValueError, "range_free_edges: inconsistent arguments");
    PyBuffer_Release(&kb);
    PyBuffer_Release(&ob);
    return fits ? Py_NewRef(Py_None) : NULL;
}

PyDoc_STRVAR(operating_points_doc,
"operating_points(edges, neg, pos, weighted, thresholds, tp, fp) -> None\n\n"
"The curve points of curves.operating_points: `thresholds` (+inf, then the edges from the top), `tp` and `fp`\n"
"(0, then the running sums of the bins' counts from the top) as float64, each one longer than the bins. Counts\n"
"are int64 (summed as integers, then made floats) or, weighted, float64 (summed in order, as numpy's cumsum).");

#define RUNNING_FROM_TOP(T)                                                                               \
    do {                                                                                                  \
        const T *neg = (const T *)nb.buf, *pos = (const T *)pb.buf;                                       \
        T tp_sum = 0, fp_sum = 0;                                                                         \
        for (Py_ssize_t i = 0; i < k; i++) {                                                              \
            tp_sum += pos[k - 1 - i];                                                                     \
            fp_sum += neg[k - 1 - i];                                                                     \
            tp[i + 1] = (double)tp_sum;                                                                   \
            fp[i + 1] = (double)fp_sum;                                                                   \
        }                                                                                                 \
    } while (0)

static PyObject *
operating_points_of(PyObject *Py_UNUSED(module), PyObject *args)
{
    Py_buffer eb, nb, pb, thb, tpb, fpb;
    int weighted;
    if (!PyArg_ParseTuple(args, "y*y*y*pw*w*w*", &eb, &nb, &pb, &weighted, &thb, &tpb, &fpb))
        return NULL;
    Py_ssize_t k = eb.len / 8, points = (k + 1) * 8;
    int fits = eb.len % 8 == 0 && nb.len == eb.len && pb.len == eb.len && thb.len == points &&
               tpb.len == points && fpb.len == points;
    if (fits) {
        const double *edges = (const double *)eb.buf;
        double *thresholds = (double *)thb.buf, *tp = (double *)tpb.buf, *fp = (double *)fpb.buf;
        Py_BEGIN_ALLOW_THREADS
        thresholds[0] = Py_HUGE_VAL;
        tp[0] = fp[0] = 0.0;
        for (Py_ssize_t i = 0; i < k; i++)
            thresholds[i + 1] = edges[k - 1 - i];
        if (weighted)
            RUNNING_FROM_TOP(double);
        else
            RUNNING_FROM_TOP(int64_t);
        Py_END_ALLOW_THREADS
    }
    else
        PyErr_SetString(PyExc_ValueError, "operating_points: inconsistent arguments");
    PyBuffer_Release(&eb);
    PyBuffer_Release(&nb);
    PyBuffer_Release(&pb);
    PyBuffer_Release(&thb);
    PyBuffer_Release(&tpb);
    PyBuffer_Release(&fpb);
    return fits ? Py_NewRef(Py_None) : NULL;
}

PyDoc_STRVAR(pr_auc_terms_doc,
"pr_auc_terms(tp, fp, logs, out) -> int\n\n"
"curves.pr_auc's segments between the curve points (float64 tp, fp) where true positives rise. With `logs`\n"
"None `out` takes the arguments of log1p of the segments that start past the first prediction, in order;\n"
"with `logs` (their log1p, as numpy gives them) it takes every rising segment's area. Returns how many were\n"
"written. The same operations in the same order as the numpy path, with no fused multiply-adds.");

#define PR_BLOCK 512

/* The divisions of a block of rising segments (gathered apart: d_tp, d_fp, the predicted positives b and the
 * true positives at their start), in a loop the compiler vectorises. Without `factor` each segment's log1p
 * argument into `first`; with it, each area from its start into `first` and the factor of its log1p. */
VECTOR_CLONES NO_FUSED_MATH static void
pr_auc_block(const double *restrict d_tp, const double *restrict d_fp, const double *restrict b,
             const double *restrict tp_a, Py_ssize_t m, double *restrict first, double *restrict factor)
{
    if (factor == NULL) {
        for (Py_ssize_t j = 0; j < m; j++) {
            double c = 1.0 + d_fp[j] / d_tp[j];
            first[j] = c * d_tp[j] / b[j];
        }
        return;
    }
    for (Py_ssize_t j = 0; j < m; j++) {
        double c = 1.0 + d_fp[j] / d_tp[j];
        first[j] = d_tp[j] / c;
        factor[j] = (tp_a[j] * c - b[j]) / (c * c);
    }
}

/* `out` (k long) takes the numbers of the segments kept, in order: without logs the log1p arguments of the
 * rising segments that start past the first prediction, with logs every rising segment's area. */
NO_FUSED_MATH static Py_ssize_t
pr_auc_terms_of(const double *tp, const double *fp, Py_ssize_t k, const double *logs, Py_ssize_t n_logs,
                double *out, int *bad)
{
    double d_tp[PR_BLOCK], d_fp[PR_BLOCK], b[PR_BLOCK], tp_a[PR_BLOCK], first[PR_BLOCK], factor[PR_BLOCK];
    Py_ssize_t m = 0, j = 0, i = 0;
    while (i < k) {
        Py_ssize_t g = 0;
        for (; i < k && g < PR_BLOCK; i++) { /* gather the block's segments (the rising ones) */
            double rise = tp[i + 1] - tp[i], start = tp[i] + fp[i];
            if (!(rise > 0) || (logs == NULL && !(start > 0)))
                continue; /* a branch: a branch-free gather waits on each comparison (33.6-34.1 against 23.7-24.9 us) */
            d_tp[g] = rise;
            d_fp[g] = fp[i + 1] - fp[i];
            b[g] = start;
            tp_a[g] = tp[i];
            g++;
        }
        pr_auc_block(d_tp, d_fp, b, tp_a, g, first, logs == NULL ? NULL : factor);
        for (Py_ssize_t q = 0; q < g; q++) {
            double area = first[q];
            if (logs != NULL && b[q] > 0) {
                if (j == n_logs) {
                    *bad = 1;
                    return m;
                }
                area = area + factor[q] * logs[j++];
            }
            out[m++] = area;
        }
    }
    *bad = logs != NULL && j != n_logs;
    return m;
}

static PyObject *
pr_auc_terms(PyObject *Py_UNUSED(module), PyObject *args)
{
    Py_buffer tb, fb, lb = {0}, ob;
    PyObject *logs;
    if (!PyArg_ParseTuple(args, "y*y*Ow*", &tb, &fb, &logs, &ob))
        return NULL;
    int given = logs != Py_None;
    if (given && PyObject_GetBuffer(logs, &lb, PyBUF_SIMPLE) < 0) {
        PyBuffer_Release(&tb);
        PyBuffer_Release(&fb);
        PyBuffer_Release(&ob);
        return NULL;
    }
    Py_ssize_t k = tb.len / 8 - 1, m = 0;
    int bad = tb.len % 8 || tb.len < 8 || fb.len != tb.len || lb.len % 8 || ob.len != k * 8;
    if (!bad) {
        Py_BEGIN_ALLOW_THREADS
        m = pr_auc_terms_of((const double *)tb.buf, (const double *)fb.buf, k,
                            given ? (const double *)lb.buf : NULL, lb.len / 8, (double *)ob.buf, &bad);
        Py_END_ALLOW_THREADS
    }
    if (bad)
        PyErr_SetString(PyExc_ValueError, "pr_auc_terms: inconsistent arguments");
    PyBuffer_Release(&tb);
    PyBuffer_Release(&fb);
    if (given)
        PyBuffer_Release(&lb);
    PyBuffer_Release(&ob);
    return bad ? NULL : PyLong_FromSsize_t(m);
}

/* Whether v never falls and holds no NaN (a NaN fails every comparison, so one anywhere fails). */
static int
ascending_numbers(const double *v, Py_ssize_t n)
{
    int ascending = n == 0 || v[0] == v[0];
    for (Py_ssize_t i = 1; i < n; i++)
        ascending &= v[i - 1] <= v[i];
    return ascending;
}

PyDoc_STRVAR(calibration_spread_doc,
"calibration_spread(lo, hi, given, given_float, given_pos, pos_float, inner, out) -> bool\n\n"
"calibration._spread, compiled: into `out` (float64, 3 rows of len(inner) + 1) the events, positives and sum of\n"
"scores of each calibration bin, each group of scores spread evenly over [lo, hi] (float64, `hi` ascending).\n"
"`given` and `given_pos` are the groups' counts, int64 (running sums taken as integers) or float64 when the\n"
"flag says so; `inner` are the inner edges. The same operations in the same order as the numpy twin. Returns\n"
"False, writing nothing, when `inner` or `hi` is not ascending or holds a NaN (the twin then runs).");

#define SPREAD_COUNT(BUF, IS_FLOAT, I) ((IS_FLOAT) ? ((const double *)(BUF))[I] : (double)((const int64_t *)(BUF))[I])

/* Per inner edge e (ascending), the running sums of the groups wholly below it (those with hi <= edge: as
 * numpy's searchsorted(hi, inner, "right")) plus the part of the group across it; then each bin's share. */
NO_FUSED_MATH static void
calibration_spread_of(const double *lo, const double *hi, Py_ssize_t k, const void *given, int given_float,
                      const void *given_pos, int pos_float, const double *inner, Py_ssize_t n_inner, double *out)
{
    Py_ssize_t n_out = n_inner + 1, done = 0;
    int64_t whole_n = 0, whole_p = 0;
    double float_n = 0.0, float_p = 0.0, mid = 0.0, prev[3] = {0.0, 0.0, 0.0};
    for (Py_ssize_t e = 0; e <= n_inner; e++) {
        Py_ssize_t j = k;
        if (e < n_inner) { /* the first group whose hi passes the edge */
            Py_ssize_t a = done, b = k;
            while (a < b) {
                Py_ssize_t c = a + (b - a) / 2;
                if (hi[c] <= inner[e])
                    a = c + 1;
                else
                    b = c;
            }
            j = a;
        }
        for (; done < j; done++) {
            /* numpy's cumsum starts from the first item itself (not 0.0 + it) */
            if (given_float)
                float_n = done == 0 ? ((const double *)given)[0] : float_n + ((const double *)given)[done];
            else
                whole_n += ((const int64_t *)given)[done];
            if (pos_float)
                float_p = done == 0 ? ((const double *)given_pos)[0] : float_p + ((const double *)given_pos)[done];
            else
                whole_p += ((const int64_t *)given_pos)[done];
            double terms = SPREAD_COUNT(given, given_float, done) * (lo[done] + hi[done]) / 2.0;
            mid = done == 0 ? terms : mid + terms;
        }
        double at[3] = {given_float ? float_n : (double)whole_n, pos_float ? float_p : (double)whole_p, mid};
        if (e < n_inner) {
            Py_ssize_t jj = j < k ? j : k - 1;
            double width = hi[jj] - lo[jj];
            int straddles = j < k && lo[jj] < inner[e] && width > 0;
            double frac = straddles ? (inner[e] - lo[jj]) / width : 0.0;
            double counts = SPREAD_COUNT(given, given_float, jj), pos = SPREAD_COUNT(given_pos, pos_float, jj);
            at[0] = at[0] + counts * frac;
            at[1] = at[1] + pos * frac;
            at[2] = at[2] + counts * frac * (lo[jj] + inner[e]) / 2.0;
        }
        for (int r = 0; r < 3; r++) {
            double d = at[r] - prev[r];
            out[r * n_out + e] = isnan(d) || d > 0.0 ? d : 0.0; /* numpy's maximum(d, 0.0) */
            prev[r] = at[r];
        }
    }
}

static PyObject *
calibration_spread(PyObject *Py_UNUSED(module), PyObject *args)
{
    Py_buffer lb, hb, gb, pb, ib, ob;
    int given_float, pos_float;
    if (!PyArg_ParseTuple(args, "y*y*y*py*py*w*", &lb, &hb, &gb, &given_float, &pb, &pos_float, &ib, &ob))
        return NULL;
    Py_ssize_t k = lb.len / 8, n_inner = ib.len / 8;
    int fits = lb.len % 8 == 0 && k > 0 && hb.len == lb.len && gb.len == lb.len && pb.len == lb.len &&
               ib.len % 8 == 0 && ob.len == 3 * (n_inner + 1) * 8;
    /* the binary searches assume both ascending (and no NaN): otherwise the twin, as numpy orders them */
    const double *inner = (const double *)ib.buf, *hi = (const double *)hb.buf;
    int ascending = fits && ascending_numbers(inner, n_inner) && ascending_numbers(hi, k);
    if (fits && ascending)
        calibration_spread_of((const double *)lb.buf, hi, k, gb.buf, given_float, pb.buf,
                              pos_float, inner, n_inner, (double *)ob.buf);
    else if (!fits)
        PyErr_SetString(PyExc_ValueError, "calibration_spread: inconsistent arguments");
    PyBuffer_Release(&lb);
    PyBuffer_Release(&hb);
    PyBuffer_Release(&gb);
    PyBuffer_Release(&pb);
    PyBuffer_Release(&ib);
    PyBuffer_Release(&ob);
    return fits ? PyBool_FromLong(ascending) : NULL;
}

PyDoc_STRVAR(calibration_exact_doc,
"calibration_exact(values, given, given_float, given_pos, pos_float, inner, out) -> bool\n\n"
"calibration.calibration_bins of distinct scores, compiled: into `out` (float64, 3 rows of len(inner) + 1) the\n"
"events, positives and sum of scores of each calibration bin, each score in the bin numpy's searchsorted(inner,\n"
"value, side='left') gives, added in order as numpy's bincount adds its weights. `values` (float64) ascend;\n"
"`given` and `given_pos` are their counts, int64 or float64 as the flags say. Returns False, writing nothing,\n"
"when `inner` or `values` is not ascending or holds a NaN (the twin then runs).");

NO_FUSED_MATH static void
calibration_exact_of(const double *values, Py_ssize_t k, const void *given, int given_float, const void *pos,
                     int pos_float, const double *inner, Py_ssize_t n_inner, double *out)
{
    Py_ssize_t n_bins = n_inner + 1, e = 0;
    memset(out, 0, (size_t)(3 * n_bins) * sizeof(double));
    for (Py_ssize_t i = 0; i < k; i++) {
        double x = values[i], c = SPREAD_COUNT(given, given_float, i);
        while (e < n_inner && inner[e] < x) /* the values ascend: the bin only moves up */
            e++;
        out[e] += c;
        out[n_bins + e] += SPREAD_COUNT(pos, pos_float, i);
        out[2 * n_bins + e] += c * x;
    }
}

static PyObject *
calibration_exact(PyObject *Py_UNUSED(module), PyObject *args)
{
    Py_buffer vb, gb, pb, ib, ob;
    int given_float, pos_float;
    if (!PyArg_ParseTuple(args, "y*y*py*py*w*", &vb, &gb, &given_float, &pb, &pos_float, &ib, &ob))
        return NULL;
    Py_ssize_t k = vb.len / 8, n_inner = ib.len / 8;
    int fits = vb.len % 8 == 0 && gb.len == vb.len && pb.len == vb.len && ib.len % 8 == 0 &&
               ob.len == 3 * (n_inner + 1) * 8;
    const double *inner = (const double *)ib.buf, *values = (const double *)vb.buf;
    int ascending = fits && ascending_numbers(inner, n_inner) && ascending_numbers(values, k);
    if (fits && ascending) {
        Py_BEGIN_ALLOW_THREADS
        calibration_exact_of(values, k, gb.buf, given_float, pb.buf, pos_float, inner, n_inner, (double *)ob.buf);
        Py_END_ALLOW_THREADS
    }
    else if (!fits)
        PyErr_SetString(PyExc_ValueError, "calibration_exact: inconsistent arguments");
    PyBuffer_Release(&vb);
    PyBuffer_Release(&gb);
    PyBuffer_Release(&pb);
    PyBuffer_Release(&ib);
    PyBuffer_Release(&ob);
    return fits ? PyBool_FromLong(ascending) : NULL;
}

PyDoc_STRVAR(time_order_doc,
"time_order(t) -> (finite, ascending)\n\n"
"Whether every time of `t` (float64) is finite, and whether they never fall (t[i] <= t[i + 1]), in one pass:\n"
"numpy's isfinite(t).all() and all(t[1:] >= t[:-1]).");

/* Branch-free within a block so that the comparisons run in vector registers; a NaN fails both. */
VECTOR_CLONES static void
time_order_of(const double *restrict t, Py_ssize_t n, int *finite, int *ascending)
{
    int all_finite = 1, rising = 1;
    for (Py_ssize_t start = 0; start < n && all_finite; start += 4096) {
        Py_ssize_t stop = n - start < 4096 ? n : start + 4096;
        int f = 1, r = 1;
        for (Py_ssize_t i = start; i < stop; i++)
            f &= fabs(t[i]) <= DBL_MAX;
        for (Py_ssize_t i = start + 1; i < stop; i++)
            r &= t[i - 1] <= t[i];
        if (start > 0)
            r &= t[start - 1] <= t[start];
        all_finite &= f;
        rising &= r;
    }
    *finite = all_finite;
    *ascending = all_finite && rising;
}

static PyObject *
time_order(PyObject *Py_UNUSED(module), PyObject *args)
{
    Py_buffer tb;
    if (!PyArg_ParseTuple(args, "y*", &tb))
        return NULL;
    int finite = 1, ascending = 1;
    if (tb.len % 8) {
        PyBuffer_Release(&tb);
        PyErr_SetString(PyExc_ValueError, "time_order: inconsistent arguments");
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS
    time_order_of((const double *)tb.buf, tb.len / 8, &finite, &ascending);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&tb);
    return Py_BuildValue("(OO)", finite ? Py_True : Py_False, ascending ? Py_True : Py_False);
}

PyDoc_STRVAR(rate_crossing_doc,
"rate_crossing(a, b, positives, negatives, rates) -> (first_zero, last_above, nearest, any_number)\n\n"
"Along the curve points, with FAR and FRR either given (`rates`: FRR = a, FAR = b) or from the points' float64\n"
"true and false positives (a, b) as numpy computes them (FAR = b / negatives, FRR = 1.0 - a / positives), and\n"
"d = FRR - FAR: the first index where d == 0, the last where d > 0 (-1 for none), the first index of the\n"
"smallest |d| (of the first NaN when there is one, as numpy's argmin), and whether some d is not NaN; in one\n"
"pass, without the arrays of rates.");

#define CROSSING_BLOCK 256

/* d = FRR - FAR of a block, in vector registers (the divisions are IEEE's: the same bits as numpy's) */
VECTOR_CLONES NO_FUSED_MATH static void
rate_differences(const double *restrict a, const double *restrict b, Py_ssize_t m, double positives,
                 double negatives, int rates, double *restrict d)
{
    if (rates) {
        for (Py_ssize_t j = 0; j < m; j++)
            d[j] = a[j] - b[j];
    }
    else {
        for (Py_ssize_t j = 0; j < m; j++)
            d[j] = (1.0 - a[j] / positives) - b[j] / negatives;
    }
}

static void
rate_crossing_of(const double *a, const double *b, Py_ssize_t k, double positives, double negatives, int rates,
                 Py_ssize_t *first_zero, Py_ssize_t *last_above, Py_ssize_t *nearest, int *any_number)
{
    Py_ssize_t zero = -1, above = -1, best_at = -1, nan_at = -1;
    double best = 0.0, d[CROSSING_BLOCK];
    int number = 0;
    for (Py_ssize_t start = 0; start < k; start += CROSSING_BLOCK) {
        Py_ssize_t m = k - start < CROSSING_BLOCK ? k - start : CROSSING_BLOCK;
        rate_differences(a + start, b + start, m, positives, negatives, rates, d);
        for (Py_ssize_t j = 0; j < m; j++) {
            double dj = d[j], size = fabs(dj);
            Py_ssize_t i = start + j;
            if (dj == 0.0 && zero < 0)
                zero = i;
            if (dj > 0.0)
                above = i;
            if (size != size) {
                if (nan_at < 0)
                    nan_at = i;
            }
            else {
                number = 1;
                if (best_at < 0 || size < best) {
                    best = size;
                    best_at = i;
                }
            }
        }
    }
    *first_zero = zero;
    *last_above = above;
    *nearest = nan_at >= 0 ? nan_at : best_at;
    *any_number = number;
}

static PyObject *
rate_crossing(PyObject *Py_UNUSED(module), PyObject *args)
{
    Py_buffer ab, bb;
    double positives, negatives;
    int rates;
    if (!PyArg_ParseTuple(args, "y*y*ddp", &ab, &bb, &positives, &negatives, &rates))
        return NULL;
    PyObject *result = NULL;
    if (ab.len % 8 || bb.len != ab.len)
        PyErr_SetString(PyExc_ValueError, "rate_crossing: inconsistent arguments");
    else {
        Py_ssize_t zero, above, nearest;
        int number;
        rate_crossing_of((const double *)ab.buf, (const double *)bb.buf, ab.len / 8, positives, negatives, rates,
                         &zero, &above, &nearest, &number);
        result = Py_BuildValue("(nnnO)", zero, above, nearest, number ? Py_True : Py_False);
    }
    PyBuffer_Release(&ab);
    PyBuffer_Release(&bb);
    return result;
}

static PyMethodDef module_methods[] = {
    {"labelled_code", (PyCFunction)(void (*)(void))labelled_code, METH_FASTCALL, labelled_code_doc},
    {"count_range_free", count_range_free, METH_VARARGS, count_range_free_doc},
    {"count_uniform", count_uniform, METH_VARARGS, count_uniform_doc},
    {"count_edges", count_edges, METH_VARARGS, count_edges_doc},
    {"compact_exact", compact_exact, METH_VARARGS, compact_exact_doc},
    {"count_exact", count_exact, METH_VARARGS, count_exact_doc},
    {"sort_exact", sort_exact, METH_VARARGS, sort_exact_doc},
    {"rehash_exact", rehash_exact, METH_VARARGS, rehash_exact_doc},
    {"fill_exact", fill_exact, METH_VARARGS, fill_exact_doc},
    {"calibration_sums", calibration_sums, METH_VARARGS, calibration_sums_doc},
    {"calibration_sums_counts", calibration_sums_counts, METH_VARARGS, calibration_sums_counts_doc},
    {"row_argmax", row_argmax, METH_VARARGS, row_argmax_doc},
    {"score_columns", score_columns, METH_VARARGS, score_columns_doc},
    {"dict_rows", dict_rows, METH_VARARGS, dict_rows_doc},
    {"object_codes", object_codes, METH_VARARGS, object_codes_doc},
    {"small_codes", small_codes, METH_VARARGS, small_codes_doc},
    {"group_by_code", group_by_code, METH_VARARGS, group_by_code_doc},
    {"group_lookup", group_lookup, METH_VARARGS, group_lookup_doc},
    {"count_grouped_range_free", count_grouped_range_free, METH_VARARGS, count_grouped_range_free_doc},
    {"count_columns", count_columns, METH_VARARGS, count_columns_doc},
    {"merge_grouped", merge_grouped, METH_VARARGS, merge_grouped_doc},
    {"lower_hull", lower_hull, METH_VARARGS, lower_hull_doc},
    {"combine_exact", combine_exact, METH_VARARGS, combine_exact_doc},
    {"merge_exact", merge_exact, METH_VARARGS, merge_exact_doc},
    {"layout_cells", layout_cells, METH_VARARGS, layout_cells_doc},
    {"run_order", run_order, METH_VARARGS, run_order_doc},
    {"gather_bins", gather_bins, METH_VARARGS, gather_bins_doc},
    {"compress_paths", compress_paths, METH_O, compress_paths_doc},
    {"auc_sums", auc_sums, METH_VARARGS, auc_sums_doc},
    {"more_distinct_than", more_distinct_than, METH_VARARGS, more_distinct_than_doc},
    {"more_distinct_than_grouped", more_distinct_than_grouped, METH_VARARGS, more_distinct_than_grouped_doc},
    {"ap_terms", ap_terms, METH_VARARGS, ap_terms_doc},
    {"ap_bins", ap_bins, METH_VARARGS, ap_bins_doc},
    {"calibration_exact", calibration_exact, METH_VARARGS, calibration_exact_doc},
    {"range_free_edges", range_free_edges, METH_VARARGS, range_free_edges_doc},
    {"operating_points", operating_points_of, METH_VARARGS, operating_points_doc},
    {"pr_auc_terms", pr_auc_terms, METH_VARARGS, pr_auc_terms_doc},
    {"calibration_spread", calibration_spread, METH_VARARGS, calibration_spread_doc},
    {"time_order", time_order, METH_VARARGS, time_order_doc},
    {"rate_crossing", rate_crossing, METH_VARARGS, rate_crossing_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef speedups_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "streameval._speedups",
    .m_doc = "Compiled hot paths; each has a Python twin with identical results.",
    .m_size = -1,
    .m_methods = module_methods,
};

PyMODINIT_FUNC
PyInit__speedups(void)
{
#ifdef HAVE_COMPRESS
    use_compress = compress_supported();
#endif
    str_flush = PyUnicode_InternFromString("_flush");
    str_update_slow = PyUnicode_InternFromString("_update_slow");
    str_w = PyUnicode_InternFromString("w");
    str_t = PyUnicode_InternFromString("t");
    if (str_flush == NULL || str_update_slow == NULL || str_w == NULL || str_t == NULL)
        return NULL;
    w_names = PyTuple_Pack(1, str_w);
    t_names = PyTuple_Pack(1, str_t);
    tw_names = PyTuple_Pack(2, str_t, str_w);
    if (w_names == NULL || t_names == NULL || tw_names == NULL)
        return NULL;
    PyObject *m = PyModule_Create(&speedups_module);
    if (m == NULL)
        return NULL;
    /* each type made ready and added under its name (the part of tp_name after the last dot) */
    PyTypeObject *types[] = {&EventBufferType, &FloatEventsType,   &ClassRowsType,    &EventLogType,
                             &PaneRouterType,  &DecayRouterType,   &SegmentRouterType, &EventCounterType,
                             &CellTallyType,   &LockedCallType};
    for (size_t k = 0; k < sizeof(types) / sizeof(types[0]); k++)
        if (PyModule_AddType(m, types[k]) < 0) {
            Py_DECREF(m);
            return NULL;
        }
    if (PyModule_AddIntConstant(m, "CAPACITY", CAPACITY) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
