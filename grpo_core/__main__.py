from grpo_core.cli import main

main()
