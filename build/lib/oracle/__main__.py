from oracle.entry import main

main()
