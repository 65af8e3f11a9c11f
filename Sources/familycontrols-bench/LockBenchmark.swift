func runLockBenchmark(_ arguments: [String]) -> Int32 {
    print("not implemented yet")
    return 1
}
