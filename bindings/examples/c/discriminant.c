/*
 * The discriminant of the source tutorials from C: sqrt(b*b - 4*a*c) as an
 * expression string, fused and evaluated lazily, plus a sum.
 * Built and run by scripts/test.sh:
 *   cc -I bindings/include bindings/examples/c/discriminant.c \
 *      -L target/debug -llazyfuse_ffi -lm -o target/discriminant
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "lazyfuse.h"

#define N 1000

static int check(lf_status status, const char *what) {
    if (status != LF_OK) {
        fprintf(stderr, "%s failed (status %d): %s\n", what, (int)status, lf_last_error_message());
        exit(1);
    }
    return 0;
}

int main(void) {
    static float a[N], b[N], c[N], d[N];
    for (int i = 0; i < N; i++) {
        a[i] = 1.0f + (float)(i % 7) * 0.1f;
        b[i] = 4.0f + (float)(i % 5);
        c[i] = 0.5f + (float)(i % 3) * 0.25f;
    }

    lf_context *cx = NULL;
    check(lf_context_new(NULL, &cx), "lf_context_new");

    size_t shape[1] = {N};
    lf_array *xa = NULL, *xb = NULL, *xc = NULL;
    check(lf_array_from_data(cx, LF_F32, shape, 1, a, &xa), "lf_array_from_data(a)");
    check(lf_array_from_data(cx, LF_F32, shape, 1, b, &xb), "lf_array_from_data(b)");
    check(lf_array_from_data(cx, LF_F32, shape, 1, c, &xc), "lf_array_from_data(c)");

    const char *names[3] = {"a", "b", "c"};
    lf_ufunc *disc = NULL;
    check(lf_ufunc_from_expr("sqrt(b*b - 4*a*c)", names, 3, &disc), "lf_ufunc_from_expr");

    const lf_array *args[3] = {xa, xb, xc};
    lf_array *xd = NULL, *total = NULL;
    check(lf_ufunc_call(disc, args, 3, &xd), "lf_ufunc_call");
    check(lf_reduce("sum", xd, 0, true, &total), "lf_reduce");

    /* A parse error is reported, not fatal. */
    lf_ufunc *broken = NULL;
    if (lf_ufunc_from_expr("sqrt(b*b - 4*a*c", names, 3, &broken) == LF_OK) {
        fprintf(stderr, "expected a parse error\n");
        return 1;
    }
    printf("parse error, as expected: %s\n", lf_last_error_message());

    check(lf_array_read(xd, d, sizeof d), "lf_array_read(d)");
    float sum = 0.0f;
    check(lf_array_read(total, &sum, sizeof sum), "lf_array_read(sum)");

    double want_sum = 0.0;
    int bad = 0;
    for (int i = 0; i < N; i++) {
        float want = sqrtf(b[i] * b[i] - 4.0f * a[i] * c[i]);
        want_sum += want;
        if (fabsf(d[i] - want) > 1e-5f * fabsf(want)) {
            bad++;
        }
    }
    printf("d[0..3] = %g %g %g\n", d[0], d[1], d[2]);
    printf("sum(d) = %g (expected %g)\n", sum, want_sum);
    if (bad || fabs(sum - want_sum) > 1e-4 * fabs(want_sum)) {
        fprintf(stderr, "mismatch: %d elements differ\n", bad);
        return 1;
    }

    lf_array_free(total);
    lf_array_free(xd);
    lf_ufunc_free(disc);
    lf_array_free(xa);
    lf_array_free(xb);
    lf_array_free(xc);
    lf_context_free(cx);
    printf("C example: ok\n");
    return 0;
}
