// README "Using Strata": a whole program's body.
int main() {
  // @README_EXAMPLE@
  return 0;
}
