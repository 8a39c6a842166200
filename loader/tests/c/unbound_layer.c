/* A layer library that calls a function nothing defines: opened as the Khronos loader opens it,
 * each symbol bound at its first call (RTLD_LAZY), it is accepted and ends the process at that
 * call. */
extern void vk_test_function_nothing_defines(void);

void *vkGetInstanceProcAddr(void *instance, const char *name) {
    (void)instance;
    (void)name;
    vk_test_function_nothing_defines();
    return 0;
}
