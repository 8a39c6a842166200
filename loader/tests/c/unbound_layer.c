/* A layer library that calls a function nothing defines: opened binding every symbol
 * (RTLD_NOW), it is refused; bound at the first call (RTLD_LAZY), it would be accepted and end the
 * process at that call. */
extern void vk_test_function_nothing_defines(void);

void *vkGetInstanceProcAddr(void *instance, const char *name) {
    (void)instance;
    (void)name;
    vk_test_function_nothing_defines();
    return 0;
}
