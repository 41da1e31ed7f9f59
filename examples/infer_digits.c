/* infer_digits.c: call a compiled irkit model from C.

   Classifies 8x8 digit images with examples/mlp.irk compiled to a shared library, through
   the `_run` forward entry point that irkit-compile generates (mlp_forward_run in mlp.h),
   then shows the error path: a call with a wrongly shaped input returns nonzero, runs
   nothing, and irkit_last_error() says why.

   Build and run (from the repository root):

       irkit-compile examples/mlp.irk -o build/mlp.so      # build/mlp.so, mlp.h, mlp.so.json
       cc -std=c11 -Ibuild examples/infer_digits.c build/mlp.so -o build/infer_digits \
          -Wl,-rpath,"$PWD/build"
       build/infer_digits build/mlp.params.bin              # after scripts/demo.sh

   usage: infer_digits [PARAMS.bin [IMAGES.bin]]

   Parameters. The library holds the model's variables (w1, b1, w2, b2, and Adam's state for
   mlp_train_step_run, which this program does not call), and mlp_forward_run uses them: the
   program passes only the images and the output buffers. Trained values come from Python:
   examples/train_digits.py writes build/mlp.params.bin, the raw float32 arrays w1[64][128],
   b1[128], w2[128][10], b2[10] one after the other (numpy's tofile, row-major, native byte
   order, 4 * 9610 bytes), which this program copies into the library by name with
   mlp_set_variable. Without PARAMS.bin it calls mlp_init_variables(): the parameters are
   then the model's initializers (normal, glorot, zeros: the same numbers as
   irkit.load_model gives in Python), an untrained model whose predictions mean nothing, so
   that run shows only the calling convention.

   Inputs. Without IMAGES.bin the program classifies the three hand-drawn digits below
   (pixels 0..16 scaled to [0, 1], as the training data). IMAGES.bin holds N images as raw
   float32[N][64] (N = file size / 256 bytes, at most MAX_IMAGES).

   Output: one line per image, "image I: predicted D", then the logits; the wrong-shape call
   last. The exit status is 0 when every correct call succeeded and the wrong one failed. */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mlp.h"

#define IN 64
#define HIDDEN 128
#define CLASSES 10
#define MAX_IMAGES 4096

/* The parameters in PARAMS.bin, in file order, with their element counts. */
static const struct {
  const char *name;
  int64_t count;
} PARAMS[] = {{"w1", IN * HIDDEN}, {"b1", HIDDEN}, {"w2", HIDDEN * CLASSES}, {"b2", CLASSES}};
#define PARAM_COUNT (IN * HIDDEN + HIDDEN + HIDDEN * CLASSES + CLASSES)

/* Descriptors over caller-owned row-major arrays (offset 0, strides in elements). */
static irkit_memref_f32_2d desc2(float *data, int64_t rows, int64_t cols) {
  irkit_memref_f32_2d d = {data, data, 0, {rows, cols}, {cols, 1}};
  return d;
}

static float d_w1[IN * HIDDEN], d_b2[CLASSES];   /* gradient outputs of @forward, unused */

/* A 0, a 1 and a 7 drawn by hand, pixels 0..16. */
static const unsigned char DRAWN[3][IN] = {
    {0, 0, 5, 13, 9, 1, 0, 0,  0, 0, 13, 15, 10, 15, 5, 0,  0, 3, 15, 2, 0, 11, 8, 0,
     0, 4, 12, 0, 0, 8, 8, 0,  0, 5, 8, 0, 0, 9, 8, 0,  0, 4, 11, 0, 1, 12, 7, 0,
     0, 2, 14, 5, 10, 12, 0, 0,  0, 0, 6, 13, 10, 0, 0, 0},
    {0, 0, 0, 12, 13, 5, 0, 0,  0, 0, 0, 11, 16, 9, 0, 0,  0, 0, 3, 15, 16, 6, 0, 0,
     0, 7, 15, 16, 16, 2, 0, 0,  0, 0, 1, 16, 16, 3, 0, 0,  0, 0, 1, 16, 16, 6, 0, 0,
     0, 0, 1, 16, 16, 6, 0, 0,  0, 0, 0, 11, 16, 10, 0, 0},
    {0, 0, 7, 8, 13, 16, 15, 1,  0, 0, 7, 7, 4, 11, 12, 0,  0, 0, 0, 0, 8, 13, 1, 0,
     0, 4, 8, 8, 15, 15, 6, 0,  0, 2, 11, 11, 15, 13, 4, 0,  0, 0, 0, 0, 16, 5, 0, 0,
     0, 0, 0, 9, 15, 1, 0, 0,  0, 0, 0, 13, 5, 0, 0, 0},
};

/* Read exactly `count` floats from `f`; 0 on success. */
static int read_floats(FILE *f, float *dst, size_t count) {
  return fread(dst, sizeof(float), count, f) == count ? 0 : 1;
}

/* Read PARAMS.bin whole, then copy each parameter into the library by name (the library
   checks its size against the variable's). 0 on success. */
static int load_params(const char *path) {
  static float values[PARAM_COUNT];
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "infer_digits: cannot open parameters '%s'\n", path);
    return 1;
  }
  int bad = read_floats(f, values, PARAM_COUNT) || fgetc(f) != EOF;
  fclose(f);
  if (bad) {
    fprintf(stderr, "infer_digits: '%s' is not %d raw float32 values (w1, b1, w2, b2)\n", path,
            PARAM_COUNT);
    return 1;
  }
  const float *p = values;
  for (size_t i = 0; i < sizeof PARAMS / sizeof PARAMS[0]; i++) {
    if (mlp_set_variable(PARAMS[i].name, p, PARAMS[i].count * (int64_t)sizeof(float)) != 0) {
      fprintf(stderr, "infer_digits: %s\n", irkit_last_error());
      return 1;
    }
    p += PARAMS[i].count;
  }
  return 0;
}

/* The images of `path` (raw float32[N][64]) into a new buffer; N in *n. NULL on error. */
static float *load_images(const char *path, int64_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "infer_digits: cannot open images '%s'\n", path);
    return NULL;
  }
  fseek(f, 0, SEEK_END);
  long bytes = ftell(f);
  fseek(f, 0, SEEK_SET);
  long image_bytes = IN * sizeof(float);
  if (bytes <= 0 || bytes % image_bytes || bytes / image_bytes > MAX_IMAGES) {
    fprintf(stderr, "infer_digits: '%s' is not 1..%d images of %d float32 pixels\n", path,
            MAX_IMAGES, IN);
    fclose(f);
    return NULL;
  }
  *n = bytes / image_bytes;
  float *x = malloc((size_t)bytes);
  if (x && read_floats(f, x, (size_t)(*n * IN))) {
    free(x);
    x = NULL;
  }
  fclose(f);
  return x;
}

int main(int argc, char **argv) {
  if (argc > 3) {
    fprintf(stderr, "usage: %s [PARAMS.bin [IMAGES.bin]]\n", argv[0]);
    return 2;
  }
  if (argc >= 2) {
    if (load_params(argv[1])) return 1;
  } else {
    mlp_init_variables();
    printf("no parameter file: the model's initial (untrained) parameters, so the predictions "
           "mean nothing\n");
  }

  int64_t n = 3;
  float *x;
  if (argc == 3) {
    x = load_images(argv[2], &n);
    if (!x) return 1;
  } else {
    x = malloc(sizeof(float) * 3 * IN);
    if (!x) return 1;
    for (int i = 0; i < 3 * IN; i++) x[i] = DRAWN[i / IN][i % IN] / 16.0f;
  }
  int32_t *labels = calloc((size_t)n, sizeof(int32_t));   /* only the loss uses them */
  float *logits = malloc(sizeof(float) * (size_t)n * CLASSES);
  if (!labels || !logits) return 1;
  float loss = 0;

  irkit_memref_f32_2d x_d = desc2(x, n, IN), logits_d = desc2(logits, n, CLASSES);
  irkit_memref_i32_1d labels_d = {labels, labels, 0, {n}, {1}};
  irkit_memref_f32_0d loss_d = {&loss, &loss, 0};
  irkit_memref_f32_2d d_w1_d = desc2(d_w1, IN, HIDDEN);
  irkit_memref_f32_1d d_b2_d = {d_b2, d_b2, 0, {CLASSES}, {1}};

  int status = 0;
  if (mlp_forward_run(&x_d, &labels_d, &logits_d, &loss_d, &d_w1_d, &d_b2_d) != 0) {
    fprintf(stderr, "infer_digits: mlp_forward_run failed: %s\n", irkit_last_error());
    status = 1;
  } else {
    for (int64_t i = 0; i < n; i++) {
      const float *row = logits + i * CLASSES;
      int best = 0;
      for (int c = 1; c < CLASSES; c++)
        if (row[c] > row[best]) best = c;
      printf("image %lld: predicted %d  logits", (long long)i, best);
      for (int c = 0; c < CLASSES; c++) printf(" %.3f", row[c]);
      printf("\n");
    }
  }

  /* The error path: claim the images have 63 pixels. mlp_forward_run calls
     mlp_forward_checked, which compares every static size with the header's declaration
     and refuses to run. */
  irkit_memref_f32_2d bad = desc2(x, n, IN - 1);
  int rc = mlp_forward_run(&bad, &labels_d, &logits_d, &loss_d, &d_w1_d, &d_b2_d);
  if (rc != 0) {
    printf("wrong shape: mlp_forward_run returned %d: %s\n", rc, irkit_last_error());
  } else {
    printf("wrong shape: mlp_forward_run accepted a %lldx%d input\n", (long long)n, IN - 1);
    status = 1;
  }

  free(x);
  free(labels);
  free(logits);
  return status;
}
