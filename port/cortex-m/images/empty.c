/* empty.c: the port alone (startup, semihosting exit, counter), the baseline
 * that the runtime's flash figure is measured against. */
int main(void) { return 0; }
