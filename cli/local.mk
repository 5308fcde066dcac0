# cli/: the hlorun command.
