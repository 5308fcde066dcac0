
bad@
main
p	parameter˜€€€€
p	parameter˜€€€€(0€€€€0