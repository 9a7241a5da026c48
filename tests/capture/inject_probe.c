/* Loads the injection library the way the CUDA driver does and calls InitializeInjection:
 * without a driver it must print one message and return, never crash or hang. */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  void* lib = dlopen(argv[1], RTLD_NOW);
  if (!lib) {
    fprintf(stderr, "dlopen: %s\n", dlerror());
    return 3;
  }
  int (*init)(void) = (int (*)(void))dlsym(lib, "InitializeInjection");
  if (!init) return 4;
  printf("InitializeInjection returned %d\n", init());
  return 0;
}
