from ankita.cli import main

main()
